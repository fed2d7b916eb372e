package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/device"
)

// deviceFlag is --device, which the commands that run a network take,
// with --verbose, which says in full what computes and why not a GPU.
type deviceFlag struct {
	name    *string
	verbose *bool
}

func addDeviceFlag(fs *flagSet) deviceFlag {
	return deviceFlag{
		name:    fs.String("device", "auto", "what computes the network: "+deviceHelp()),
		verbose: fs.Bool("verbose", false, "say in full what computes the network (libraries, versions) and why not a GPU"),
	}
}

// deviceHelp lists the registered backends, what auto picks and what the
// others are: "auto, cuda, cuda-tf32 or cpu (auto: an NVIDIA GPU, when …;
// else the CPU's cores; cuda-tf32: …)".
func deviceHelp() string {
	var abouts, byName []string
	for _, e := range device.Registered() {
		if e.ByNameOnly {
			byName = append(byName, "; "+e.Name+": "+e.About)
			continue
		}
		abouts = append(abouts, e.About)
	}
	return device.Choices() + " (auto: " + strings.Join(abouts, "; else ") + strings.Join(byName, "") + ")"
}

// open starts the backend; say then tells log which it is, once the
// command has what it needs to run (so that a refused command says only
// why): in a few words, or in full with --verbose.
func (f deviceFlag) open() (backend nn.Backend, say func(log io.Writer), err error) {
	backend, note, err := device.Open(*f.name)
	if err != nil {
		return nil, nil, usageError{err}
	}
	return backend, func(log io.Writer) { fmt.Fprintln(log, deviceLine(backend, note, *f.verbose)) }, nil
}

// deviceLine is the line that says what computes: "flipzero: device cpu
// (AVX-512); no GPU (--verbose says why)", or with verbose the backend's
// full name and the note on why the backends before it did not start.
func deviceLine(backend nn.Backend, note string, verbose bool) string {
	name := backend.Name()
	if s, ok := backend.(interface{ Summary() string }); ok && !verbose {
		name = s.Summary()
	}
	switch {
	case note == "":
		return "flipzero: device " + name
	case verbose:
		return "flipzero: device " + name + "; " + note
	}
	// The note's first words, "no GPU", without the reason.
	missing, _, _ := strings.Cut(note, ":")
	return "flipzero: device " + name + "; " + missing + " (--verbose says why)"
}

// addSeedFlag is --seed for commands whose randomness need not repeat:
// 0, the default, draws the seed from the clock (the help says so rather
// than print a 19-digit number that changes each time).
func addSeedFlag(fs *flagSet, usage string) func() uint64 {
	seed := fs.Uint64("seed", 0, usage+" (default 0: drawn from the clock)")
	return func() uint64 {
		if *seed == 0 {
			return uint64(time.Now().UnixNano())
		}
		return *seed
	}
}
