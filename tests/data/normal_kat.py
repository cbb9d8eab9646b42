# Prints the known answers of tests/tape/test_tape_philox.cpp (BoxMullerKnownAnswers): version 4's
# Box-Muller pairs (tape/philox.h) computed outside tapelab, with exact rationals rounded correctly to
# binary64 / binary32 after every operation, and log and sqrt from mpmath at 60 digits, rounded
# correctly: nothing from tapelab, libm or an FMA unit. (The angle's part uses no libm at all, so its
# cos and sin are checked exactly; the draws agree with a libm whose log and sqrt are correctly rounded
# for these words, as glibc's are.)
from fractions import Fraction as F
import math, struct
import mpmath
mpmath.mp.dps = 60
SIN=[F(-1, 39916800), F(1, 362880), F(-1, 5040), F(1, 120), F(-1, 6)]
COS=[F(1, 479001600), F(-1, 3628800), F(1, 40320), F(-1, 720), F(1, 24), F(-1, 2)]
HALF_PI=F(1.5707963267948966)
def r64(x): return F(float(F(x)))            # Fraction -> float: correctly rounded
def r32(x):
    x=F(x)
    if x==0: return F(0)
    s=-1 if x<0 else 1; a=abs(x)
    e=0
    while a>=2**(e+1): e+=1
    while a<2**e: e-=1
    ulp=F(2)**(e-23)                     # 24 significant bits
    m=a/ulp; fl=m.numerator//m.denominator; rem=m-fl
    if rem>F(1,2) or (rem==F(1,2) and fl%2==1): fl+=1
    return s*fl*ulp
def coef(c, rnd): return rnd(r64(c))     # the double constant, then T
def horner(cs, x, rnd):
    h=coef(cs[0], rnd)
    for c in cs[1:]: h=rnd(h*x+coef(c, rnd))
    return rnd(h*x+1)
def mp(x): return mpmath.mpf(x.numerator)/x.denominator
def to_f(v):
    s, m, e, _ = mpmath.mpf(v)._mpf_; m = -m if s else m
    return F(m)*F(2)**e if e >= 0 else F(m, 2**-e)
def angle(b, rnd):
    n=b>>30
    f=rnd(F((b>>9)&((1<<21)-1))*F(1,2**21)+(F(1,2**22)-F(1,2)))
    th=rnd(f*rnd(HALF_PI)); t=rnd(th*th)
    s=rnd(th*horner(SIN, t, rnd)); c=horner(COS, t, rnd)
    x,y=(s,c) if n&1 else (c,s)
    return (-x if n in (1,2) else x, -y if n>=2 else y)
def pair(a, b, rnd):
    u=rnd((F(a>>9)+F(1,2))*F(1,2**23))
    lg=rnd(to_f(mpmath.log(mp(u))))
    rho=rnd(to_f(mpmath.sqrt(mp(rnd(-2*lg)))))
    x,y=angle(b, rnd)
    return rnd(rho*x), rnd(rho*y)
def b64(x): return struct.unpack('<Q',struct.pack('<d',float(x)))[0]
def b32(x): return struct.unpack('<I',struct.pack('<f',float(x)))[0]
# Draws 0..3 of path 0 under seed 42 (two pairs), the next group's, and words at the edges.
words=[(0x9ceaf053,0x77f5493b),(0x12bf50ad,0x5742b3d7),(0xfcdb2127,0x53ba6cfd),(0x838f5a6e,0x744e06fb),
       (0x00000000,0xffffffff),(0xffffffff,0x00000000),(0x7fffff00,0x40000000),(0x08000000,0xbfffffff)]
for a,b in words:
    e64,o64=pair(a,b,r64); e32,o32=pair(a,b,r32)
    print("    {0x%08x, 0x%08x, 0x%016x, 0x%016x, 0x%08x, 0x%08x},  // %.17g %.17g" % (a,b,b64(e64),b64(o64),b32(e32),b32(o32),float(e64),float(o64)))
print("angles:")
for _,b in words:
    x64,y64=angle(b,r64); x32,y32=angle(b,r32)
    print("    {0x%08x, 0x%016x, 0x%016x, 0x%08x, 0x%08x},  // %.17g %.17g" % (b,b64(x64),b64(y64),b32(x32),b32(y32),float(x64),float(y64)))
