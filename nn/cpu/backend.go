package cpu

import "github.com/flipzero/flipzero/nn"

// Backend is the backend that computes on the CPU in float32: Gorgonia
// trains (with this package's own convolution and batch-norm
// operations), and the Evaluator infers (direct AVX-512 or AVX2
// convolutions, or im2row and a matrix multiply). It is what other
// backends are checked against.
func Backend() nn.Backend { return backend{} }

// FastBackend is the CPU backend that evaluates the tower's convolutions
// in reduced precision where the CPU has it: in bfloat16 on AMX's tiles
// where it has AMX; else on bytes where it has AVX-512 VNNI (on Zen 4
// 1.8× AVX-512 BF16's positions a second at othello; an hour of YINSH
// blitz self-play on a core with it beat bfloat16's); else in bfloat16
// where it has AVX-512 BF16 (1.6× float32's positions a second,
// probabilities within 0.03 of float32's; an hour of Othello self-play
// on a core with it beat float32 82–3–15); else, on a CPU without
// AVX-512, on bytes with AVX-VNNI (int8.go); else as Backend does (AVX2's
// bytes, faster but no stronger at equal time, where
// FLIPZERO_CONV=avx2int8). It trains in float32, except on AMX: there
// in mixed precision on the AMX kernels (trainArch).
func FastBackend() nn.Backend { return backend{fast: true} }

// backend is the CPU; fast lets its evaluators take the kernels of
// reduced precision.
type backend struct{ fast bool }

// arch is the kernel set the backend's evaluators convolve with, if any.
func (b backend) arch() (directArch, bool) { return directChoice(b.fast) }

func (b backend) Name() string {
	return "cpu (" + b.ConvInfo() + ", training in " + b.TrainInfo() + "; " + BLASInfo() + ")"
}

// ConvInfo says how the backend's evaluators convolve, for people.
func (b backend) ConvInfo() string { return convInfo(b.arch()) }

// SpeedNote says why the backend's inference can pass the float32 matrix
// multiply's peak, for a benchmark's reader ("" if it cannot).
func (b backend) SpeedNote() string {
	if arch, ok := b.arch(); ok && arch.int8 {
		times := "four times"
		if arch.pairSums {
			times = "twice" // two instructions for VNNI's one
		}
		return "the " + arch.name + " kernels multiply bytes, " + times + " the products a cycle that the float32 peak counts, and gather nothing first"
	}
	if arch, ok := b.arch(); ok && arch.bf16 {
		return "the " + arch.name + " kernels multiply bfloat16, more products a cycle than the float32 peak counts (AVX-512 BF16 twice as many, AMX up to sixteen times), and gather nothing first"
	}
	return SpeedNote()
}

// Summary names the backend in a few words, for the line every command
// starts with: the CPU and the kernels its convolutions run on.
func (b backend) Summary() string {
	if arch, ok := b.arch(); ok {
		return "cpu (" + arch.name + ")"
	}
	return "cpu"
}

func (b backend) NewInference(f *nn.Folded, maxBatch int) (nn.Inference, error) {
	arch, direct := b.arch()
	return newEvaluator(f, maxBatch, arch, direct)
}

// trainArch is the kernel set the backend's trainers convolve with, if
// any: on AMX, the fast backend's (mixed precision: bfloat16 products,
// float32 sums, weights and optimizer; 1.6 times float32's samples a
// second on a Xeon core, and an hour of Othello self-play on a core with
// it beat float32's +135 Elo [+70, +211]); else the float32 set of its
// width, its 3×3 convolutions by Winograd where winogradTraining says so
// (FLIPZERO_CONV may name a bfloat16 set for either backend: on AVX-512
// BF16 without AMX its hour's match settled nothing, and on a Zen 4 core
// it trains 1.3× float32's direct kernels' samples a second where
// Winograd trains 1.7×).
func (b backend) trainArch() (directArch, bool) {
	if arch, ok := b.arch(); ok && b.fast && arch.amx {
		return arch, true
	}
	arch, ok := directDefault()
	arch = arch.forTraining()
	arch.winograd = winogradTraining(arch)
	return arch, ok
}

// TrainInfo says how the backend's trainers convolve, for people.
func (b backend) TrainInfo() string {
	arch, ok := b.trainArch()
	switch {
	case !ok:
		return "float32 on im2col + matrix multiply"
	case arch.bf16:
		return "mixed precision on the " + arch.name + " kernels"
	case arch.winograd:
		return "float32 on the " + arch.name + " kernels, 3×3 convolutions by Winograd's F(4×4, 3×3)"
	}
	return "float32 on the " + arch.name + " kernels"
}

func (b backend) NewTraining(s nn.TrainingState) (nn.Training, error) {
	if err := s.CheckVelocity(); err != nil {
		return nil, err
	}
	arch, direct := b.trainArch()
	t, err := newTrainer(s.Network, s.Config, arch, direct)
	if err != nil {
		return nil, err
	}
	for i, v := range s.Velocity {
		copy(t.velocity[i], v)
	}
	t.steps = s.Steps
	return t, nil
}

// Velocity is the momentum buffer, parallel to Network().Learnables().
func (t *Trainer) Velocity() [][]float32 { return t.velocity }

// Sync does nothing: the Gorgonia trainer works on the network's own arrays.
func (t *Trainer) Sync() error { return nil }
