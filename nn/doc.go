// Package nn will hold the policy/value network, built and trained with
// Gorgonia: the residual tower and its heads, the training step, batched
// inference, and the checkpoint and model file formats.
package nn
