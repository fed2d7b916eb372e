package nn

// Check validates a batch of n samples for a network with the given
// numbers of actions and cells, as Trainer.Step does: for trainers
// outside this package (the GPU's) to reject exactly what this one
// rejects.
func (b Batch) Check(n, actions, cells int) error { return b.check(n, actions, cells) }
