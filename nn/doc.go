// Package nn is the policy/value network: a residual tower of 3×3
// convolutions with batch norm and ReLU, a policy head with logits over the
// game's whole action space and a win/draw/loss value head.
//
// The network is defined and trained with Gorgonia (Trainer: masked policy
// cross-entropy against the search's visit distribution, value
// cross-entropy, L2 weight decay, SGD with momentum); in the training
// graph the convolutions and batch norms are the package's own Gorgonia
// operations, which keep their buffers between steps and split each batch
// over all cores (GOMAXPROCS). Inference for the search runs the same
// weights with batch norm folded into the convolutions (Folded,
// Evaluator): on CPUs with AVX-512 or AVX2, through the package's own
// convolution kernels (direct.go), which multiply each input where it
// lies in padded activations, near the CPU's peak; elsewhere through
// im2row and a matrix multiply. Tests check both against Gorgonia's
// forward pass on every game.
//
//	net, _ := nn.New(game, nn.DefaultConfig(game), seed)
//	trainer, _ := nn.NewTrainer(net, nn.DefaultTrainConfig())
//	losses, _ := trainer.Step(batch)
//	ev, _ := net.Fold().NewEvaluator(64) // one per goroutine
//	ev.Evaluate(states, priors, values)
//	nn.SaveCheckpoint(path, trainer, metadata)
//
// Describe gives the network as typed layers that a compute backend walks
// (Backend; the GPU's is nn/cuda), and nn/nntest checks every backend
// against the Gorgonia reference. On a backend that wants large batches
// (Multiplexed: a GPU), Evaluators gives self-play's workers clients of
// one batching server (Server).
//
// Checkpoints hold the weights, batch-norm statistics and optionally the
// optimizer state in one versioned, checksummed binary format (see
// checkpoint.go); a model file is the same format without the optimizer.
// A run that averages its weights (average.go) saves the average as the
// checkpoint's network and the trained weights beside the optimizer
// state (SaveAveragedCheckpoint).
//
// Matrix multiplies run on OpenBLAS, loaded at run time without cgo
// where libopenblas.so.0 is installed, with kernels chosen from the CPU's
// instruction sets and one thread per call so that parallel evaluators do
// not fight over cores; elsewhere, or with FLIPZERO_BLAS=gonum, on gonum's
// pure-Go BLAS. BLASInfo says which.
package nn
