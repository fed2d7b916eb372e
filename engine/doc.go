// Package engine is the bot people play against: one game at a time, a
// search per decision (by playouts or by time) over a network or any
// other evaluator, the game's history with undo, and analysis of the
// position with each candidate's statistics. The terminal, the web page
// and the GTP server drive it.
package engine
