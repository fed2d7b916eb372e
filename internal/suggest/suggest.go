// Package suggest finds, among the names a program knows, the one a
// mistyped name was most likely meant to be, so that an error can say
// "did you mean" instead of leaving the user to look the names up.
package suggest

import "strings"

// Nearest returns the candidate nearest to name by edit distance, when
// it is near enough to be a slip of the fingers: at most a third of the
// name's length in edits, and at least one. Letter case does not count. Of candidates equally near, the first
// wins; the name itself is never suggested.
func Nearest(name string, candidates []string) (string, bool) {
	limit := max(1, len([]rune(name))/3)
	best, bestDistance := "", limit+1
	for _, c := range candidates {
		if c == name {
			continue
		}
		if d := Distance(strings.ToLower(name), strings.ToLower(c)); d < bestDistance {
			best, bestDistance = c, d
		}
	}
	return best, best != ""
}

// Distance is the number of single-letter insertions, deletions,
// substitutions and swaps of two neighbouring letters that turn a into
// b (the optimal string alignment distance): a swap counts one, since
// "cpcut" for "cpuct" is one slip, not two.
func Distance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// rows[i][j] is the distance from s[:i] to t[:j]; three rows are
	// enough, since a swap looks back two.
	before, prev, cur := make([]int, len(t)+1), make([]int, len(t)+1), make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				cur[j] = min(cur[j], before[j-2]+1)
			}
		}
		before, prev, cur = prev, cur, before
	}
	return prev[len(t)]
}
