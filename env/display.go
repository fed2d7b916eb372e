package env

// Display is an optional interface of State for showing a position to
// people: the terminal, the web page and GTP's showboard use it, so that
// none of them needs to know a game's types. A game without it is shown
// by its String and its actions' notation alone.
type Display interface {
	// Picture draws the board for a terminal, with its coordinates.
	Picture() string
	// Layout is how the page draws the cells: "square" (a grid of
	// squares) or "hex" (points of a hexagonal grid).
	Layout() string
	// Cells lists the board's points with what stands on them.
	Cells() []Cell
	// Status is a line about the running score ("black 30, white 34"), or
	// "" for a game without one.
	Status() string
	// Prompt says what the player to move is to decide ("move a ring (M
	// E5 E9)"), or "" for an ordinary move.
	Prompt() string
	// Targets says how a person picks action on the board: its kind
	// ("point", "move" from one point to another, "row" of points, or
	// "pass") and the points a click selects it by, in order.
	Targets(action int) (kind string, points []string)
}

// Cell is one point of the board as Display draws it.
type Cell struct {
	// Name is the point in the game's notation ("f5", "E5").
	Name string `json:"name"`
	// Col and Row are its column and row in the notation; X and Y place
	// it in the drawing, Y growing downwards.
	Col int     `json:"col"`
	Row int     `json:"row"`
	X   float64 `json:"x"`
	Y   float64 `json:"y"`
	// Piece is what stands there: "" for nothing, "black" or "white" for
	// a disc or mark, "white-ring", "black-marker" and the like.
	Piece string `json:"piece"`
}

// Tally is an optional interface of State: each player's points as the
// game counts them (Othello's discs, with the empty squares to the winner
// once the game is over; YINSH's rings removed), for GTP's final_score
// and score lines.
type Tally interface {
	Tally() (first, second int)
}

// Solvable is an optional interface of Game: a game small enough to
// solve exactly, so that a perfect player can look its moves up.
type Solvable interface {
	// Solve solves the game; the solver is read-only and safe to share.
	Solve() Solver
}

// Solver knows the perfect moves of a solved game.
type Solver interface {
	// PerfectActions appends to buf[:0] every legal action of s that
	// keeps the best result with perfect play.
	PerfectActions(s State, buf []int) []int
}
