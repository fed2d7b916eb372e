package main

import (
	"fmt"
	"io"

	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/device"
)

// deviceFlag is --device, which the commands that run a network take.
type deviceFlag struct{ name *string }

func addDeviceFlag(fs *flagSet) deviceFlag {
	return deviceFlag{fs.String("device", "auto", "what computes the network: "+device.Choices+
		" (auto: an NVIDIA GPU when CUDA's driver, cuBLAS and cuDNN load and find one, else the CPU)")}
}

// open starts the backend; say then tells log which it is, once the
// command has what it needs to run (so that a refused command says only
// why).
func (f deviceFlag) open() (backend nn.Backend, say func(log io.Writer), err error) {
	backend, note, err := device.Open(*f.name)
	if err != nil {
		return nil, nil, usageError{err}
	}
	return backend, func(log io.Writer) {
		if note != "" {
			fmt.Fprintf(log, "flipzero: device %s; %s\n", backend.Name(), note)
		} else {
			fmt.Fprintf(log, "flipzero: device %s\n", backend.Name())
		}
	}, nil
}
