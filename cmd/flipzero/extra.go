package main

// extraCommands lists the subcommands beyond the game-rule tools.
func extraCommands() []command {
	return nil
}
