// Package loop is the training loop: generations of self-play with the
// newest (or gated) network, training on the replay window and a
// checkpoint, written to the run folder so that a run killed at any
// moment resumes from its newest checkpoint. It owns the run's
// configuration (Config, parsed once into the modules' own settings),
// its metrics, the optional per-generation arena, and export of a
// generation as a model.
package loop
