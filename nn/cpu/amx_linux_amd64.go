package cpu

import "syscall"

// amxPermit asks Linux to let this process use AMX's tile data
// (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA): the system
// saves its 8 KiB only for processes that asked. It is granted once for
// every thread of the process.
func amxPermit() bool {
	const reqXcompPerm, xtileData = 0x1023, 18
	_, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, reqXcompPerm, xtileData, 0)
	return errno == 0
}
