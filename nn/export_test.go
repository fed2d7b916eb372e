package nn

// OpenEvaluators is how many evaluators e keeps for Reload.
func OpenEvaluators(e *Evaluators) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.own)
}
