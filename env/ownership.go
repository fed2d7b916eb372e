package env

// Ownership is an optional interface of State: what the end of a game
// says about each cell and about the margin, for the network's auxiliary
// targets. KataGo found that predicting them as well as the result gives
// the network several times more to learn from each game: a win says one
// bit, the final board says which parts of the position decided it.
//
// Both are meant for terminal states, and are read from the point of
// view of a player, as the encoding is from the player to move's.
type Ownership interface {
	// Ownership writes into dst, one value for each cell of the
	// encoding's height × width grid, 1 where player p holds the cell at
	// the end (Othello: a disc; YINSH: a ring or a marker), −1 where the
	// other player does, 0 where nobody does or the cell is no point.
	Ownership(p Player, dst []float32)
	// ScoreMargin is p's final margin scaled to [−1, 1] (Othello: the
	// disc difference with the empty squares to the winner, over 64;
	// YINSH: the difference in rings removed, over the rings that win).
	ScoreMargin(p Player) float32
}

// PolicyMap is an optional interface of Game: its actions laid out on the
// encoding's grid, so that a network can score each action at the cell
// it is about with a convolution, the same weights everywhere on the
// board (Leela Chess Zero's and KataGo's policy heads), rather than with
// a fully connected layer over the whole board.
type PolicyMap interface {
	// PolicyPlanes is how many planes of the grid the actions take.
	PolicyPlanes() int
	// PolicyCell is where action a lies: a plane and a cell of the
	// height × width grid, no two actions at the same place; ok is false
	// for an action about no cell (a pass), which is scored from the
	// whole board.
	PolicyCell(a int) (plane, cell int, ok bool)
}
