// Package nn is the policy/value network as data: a residual tower of
// 3×3 convolutions with batch norm and ReLU, a policy head with logits
// over the game's whole action space and a win/draw/loss value head, and
// the options on it (global pooling, a convolutional policy head, the
// ownership and score heads).
//
// What is here is the same whatever computes the network:
//
//   - the architecture (Config) and the weights (Network);
//   - the typed description every backend walks (Describe: each
//     convolution, batch norm, dense layer and head as a typed value
//     indexing the weight arrays, KataGo's desc.h), and the inference
//     snapshot with batch norm folded in (Fold, Layers);
//   - the checkpoint and model files, with the optimizer state as data
//     (TrainingState), so that a run trained on one backend resumes on
//     another;
//   - batches, losses, and the seam every backend implements (Backend:
//     Inference for the search, Training for the trainer);
//   - the search's evaluator over any backend's inference (NewEvaluator:
//     one Evaluate path), and the batching server that gathers every
//     search worker's positions into large batches on a backend that
//     wants them (Evaluators, Server).
//
// Each backend lives in its own folder beside this one: nn/cpu (Gorgonia
// training with its own operations, direct AVX-512/AVX2 convolutions,
// OpenBLAS), nn/cuda (cuDNN and cuBLAS loaded at run time), nn/onnx (the
// export format). nn/device chooses a backend by name; nn/nntest is the
// conformance suite every backend passes.
//
//	net, _ := nn.New(game, nn.DefaultConfig(game), seed)
//	backend, _, _ := device.Open("auto")
//	trainer, _ := backend.NewTraining(nn.TrainingState{Network: net, Config: nn.DefaultTrainConfig()})
//	losses, _ := trainer.Step(batch)
//	ev, _ := nn.NewEvaluator(backend, net.Fold(), 64) // one per goroutine
//	ev.Evaluate(states, priors, values)
//	nn.SaveCheckpoint(path, trainer, metadata)
//
// Checkpoints hold the weights, batch-norm statistics and optionally the
// optimizer state in one versioned, checksummed binary format (see
// checkpoint.go); a model file is the same format without the optimizer.
// A run that averages its weights (average.go) saves the average as the
// checkpoint's network and the trained weights beside the optimizer
// state (SaveAveragedCheckpoint).
package nn
