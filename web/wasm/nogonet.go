//go:build js && wasm && !flipzero_gonet

package main

// measureGoNetwork adds nothing to the engine a page ships: see gonet.go.
func measureGoNetwork() {}
