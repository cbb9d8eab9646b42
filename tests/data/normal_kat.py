# Prints the known answers of tests/tape/test_tape_philox.cpp (NormalQuantileKnownAnswers):
# Known answers for the version-3 normal quantile (central region), computed with exact rationals
# and correct rounding to binary64 / binary32: nothing from tapelab, libm or an FMA unit.
from fractions import Fraction as F
import struct
A=[-3.969683028665376e+01, 2.209460984245205e+02,-2.759285104469687e+02, 1.383577518672690e+02,-3.066479806614716e+01, 2.506628277459239e+00]
B=[-5.447609879822406e+01, 1.615858368580409e+02,-1.556989798598866e+02, 6.680131188771972e+01,-1.328068155288572e+01]
def r64(x): return F(float(x))            # int/int true division: correctly rounded
def r32(x):
    x=F(x)
    if x==0: return F(0)
    s=-1 if x<0 else 1; a=abs(x)
    e=0
    while a>=2**(e+1): e+=1
    while a<2**e: e-=1
    # 24 significant bits: ulp = 2^(e-23)
    ulp=F(2)**(e-23)
    m=a/ulp; fl=m.numerator//m.denominator; rem=m-fl
    if rem>F(1,2) or (rem==F(1,2) and fl%2==1): fl+=1
    return s*fl*ulp
def quantile(w, rnd):
    c=lambda v: rnd(F(v))
    u=rnd((F(w>>9)+F(1,2))*F(1,2**23))
    assert 0.02425 <= u <= 1-0.02425, hex(w)
    q=rnd(u-F(1,2)); r=rnd(q*q)
    num=c(A[0])
    for a in A[1:]: num=rnd(num*r+c(a))
    num=rnd(num*q)
    den=c(B[0])
    for b in B[1:]: den=rnd(den*r+c(b))
    den=rnd(den*r+1)
    return rnd(num/den)
words=[0x9ceaf053,0x77f5493b,0x12bf50ad,0x5742b3d7,0x0cdb2127,0x53ba6cfd,0x838f5a6e,0x744e06fb,0x7fffff00,0x08000000]
for w in words:
    try:
        d=float(quantile(w,r64)); f=float(quantile(w,r32))
    except AssertionError: continue
    print("    {0x%08x, 0x%016x, 0x%08x},  // %.17g" % (w, struct.unpack('<Q',struct.pack('<d',d))[0], struct.unpack('<I',struct.pack('<f',f))[0], d))
