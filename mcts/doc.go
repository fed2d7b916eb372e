// Package mcts will hold the PUCT search over the game contract of package
// env, written against an Evaluator that scores a batch of positions, with
// the component that gathers the leaves of many concurrent searches into
// one batch, and the built-in uniform and random-rollout evaluators.
package mcts
