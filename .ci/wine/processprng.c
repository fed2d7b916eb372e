/* bcryptprimitives.dll with its one function ProcessPrng, which Go (1.24 on) calls at start on Windows and wine 8 lacks: from RtlGenRandom. */
#include <windows.h>
#define RtlGenRandom SystemFunction036
BOOLEAN WINAPI RtlGenRandom(PVOID, ULONG);
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE p, SIZE_T n) {
  while (n > 0) {
    ULONG c = n > 0x10000000 ? 0x10000000 : (ULONG)n;
    if (!RtlGenRandom(p, c)) return FALSE;
    p += c; n -= c;
  }
  return TRUE;
}
