// Package gtp speaks the Go Text Protocol, as Othello GUIs and engines use
// it: Client drives an outside engine (a program started with pipes to
// its standard input and output), and Serve answers a controller's
// commands for an engine of flipzero's own, written against the abstract
// Controller so that the protocol knows nothing of the search.
package gtp
