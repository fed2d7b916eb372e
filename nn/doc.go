// Package nn is the policy/value network: a residual tower of 3×3
// convolutions with batch norm and ReLU, a policy head with logits over the
// game's whole action space and a win/draw/loss value head.
//
// The network is defined and trained with Gorgonia (Trainer). Inference
// for the search goes through a plain im2col + SGEMM forward pass over the
// same weights with batch norm folded into the convolutions (Evaluator),
// which runs about twice as fast as Gorgonia's forward pass; a test checks
// both give the same outputs. Checkpoints hold the weights, batch-norm
// statistics and optionally the optimizer state in one versioned,
// checksummed binary format.
//
// The default build uses gonum's pure-Go BLAS; build with -tags openblas
// (and libopenblas-dev installed) to run Gorgonia and the Evaluator on
// OpenBLAS, limited to one thread per call so that parallel evaluators do
// not fight over cores.
package nn
