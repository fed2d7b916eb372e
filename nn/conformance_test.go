package nn_test

import (
	"testing"

	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/nntest"
)

// TestCPUConformance runs the backend conformance suite on the CPU
// backend: its direct or im2row inference and its own training
// operations against Gorgonia's.
func TestCPUConformance(t *testing.T) {
	nntest.Run(t, nn.CPU(), nntest.Options{Short: testing.Short()})
}
