package yinsh

import "github.com/flipzero/flipzero/env"

// Features are what the hand-written evaluation counts for one player.
type Features struct {
	// RingsRemoved counts the player's removed rings, plus one while a
	// removal of theirs is pending.
	RingsRemoved int
	// Markers showing the player's colour.
	Markers int
	// RingMoves is the number of moves the player's rings have.
	RingMoves int
	// Fours and Threes count the lines of 5 points holding 4 (or 3) of
	// the player's markers and none of the opponent's rings: rows one
	// or two moves from being made.
	Fours, Threes int
}

// Features counts the evaluation's terms for player p.
func (s *State) Features(p env.Player) Features {
	f := Features{
		RingsRemoved: int(s.removed[p]),
		Markers:      s.markers[p].count(),
		RingMoves:    s.moveCount(p),
	}
	if s.toMove == p && (s.phase == phaseRemoveRow || s.phase == phaseRemoveRing) {
		f.RingsRemoved++
	}
	mine, blocked := s.markers[p], s.rings[p.Other()]
	for w := range geo.window {
		win := geo.window[w]
		if !blocked.and(win).empty() {
			continue
		}
		switch mine.and(win).count() {
		case 4:
			f.Fours++
		case 3:
			f.Threes++
		}
	}
	return f
}

// Heuristic is a hand-written evaluation of the position for player p,
// the kind classical YINSH bots use: removed rings dominate, then rows
// about to be made, then markers and the rings' freedom to move. Larger
// is better for p; 0 is even.
func (s *State) Heuristic(p env.Player) float64 {
	a, b := s.Features(p), s.Features(p.Other())
	return 1000*float64(a.RingsRemoved-b.RingsRemoved) +
		30*float64(a.Fours-b.Fours) +
		6*float64(a.Threes-b.Threes) +
		2*float64(a.Markers-b.Markers) +
		0.5*float64(a.RingMoves-b.RingMoves)
}
