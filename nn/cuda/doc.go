// Package cuda runs flipzero's networks on an NVIDIA GPU through the CUDA
// driver, cuBLAS and cuDNN, loaded at run time (purego, no cgo) so that
// one static binary uses the GPU where it finds one and still runs, on
// the CPU, where it does not.
//
// An Inference evaluates nn.Layers (batch norm folded) as nn's CPU
// Evaluator does: each batch size's first call runs each way of computing
// the convolutions that may run (cuDNN's fused convolution, bias and ReLU
// on NCHW tensors; cuDNN on NHWC tensors, the layout its tensor-core
// kernels read as it is; im2row and cuBLAS SGEMM, faster for small
// batches; and, where float16 is allowed, the NHWC path in float16),
// captures each as a CUDA graph and keeps the fastest, so that later
// calls cost one graph launch. Counts between batch sizes are padded to
// the next of a few sizes; Reload takes the next network of a run into
// the same plans. A Trainer takes nn's optimizer steps (SGD with momentum
// and L2, batch norm with batch statistics, the auxiliary heads' losses)
// with cuDNN's training kernels, walking the network's typed description
// (nn.Description), and gives the weights back through Sync. Both compute
// every architecture option of nn.Config; nn/nntest's conformance suite
// checks them against Gorgonia (TestGPUConformance, where a GPU answers).
// GPU is the two behind nn.Backend. The kernels cuBLAS and cuDNN lack are
// CUDA C in kernels.cu, compiled to PTX ahead of time (kernels.ptx) and by
// the driver when a Device opens.
//
// # Precision
//
// A Device computes in float32 unless told otherwise: cuDNN's
// convolutions are set to plain float32 arithmetic (FMA math, an
// algorithm that keeps it preferred), and cuBLAS keeps its default math. The inferences and trainers made after a change take
// its mode; those made before keep theirs.
//
//   - TF32 (SetTF32; --device cuda-tf32): cuDNN and cuBLAS may round
//     float32 operands to TF32 on the tensor cores, in inference and in
//     training. Outputs stay within TF32Tolerance of the largest from
//     float32's.
//   - float16 (SetFP16; --device cuda-fp16): an inference may also take
//     the float16 path (half.go): the stem's input, padded to a multiple
//     of 8 planes, and the tower's activations and weights in float16 on
//     NHWC tensors, multiplied on the tensor cores with float32 sums, the
//     tower's output converted back to float32 for the heads. Everything
//     else, training included, is in TF32. Outputs stay within
//     FP16Tolerance of the largest from float32's.
//
// TestGPUForwardMatchesCPU holds each mode to its tolerance.
package cuda
