package nn

// Check validates a batch of n samples for a network with the given
// number of actions, as Trainer.Step does: for trainers outside this
// package (the GPU's) to reject exactly what this one rejects.
func (b Batch) Check(n, actions int) error { return b.check(n, actions) }
