// Package cluster spreads self-play over many machines through NATS
// JetStream. One trainer keeps the run folder and trains; workers anywhere
// play games with the newest network and send the positions back.
//
// Everything a run shares lives under its name N ([A-Za-z0-9_-], the run
// folder's base name by default):
//
//	key-value bucket  flipzero_N          key "state": the run's id, game,
//	                                      config, the generation to play
//	                                      with and its model's object name
//	object store      flipzero_N_models   gen-NNNNNN: each published network
//	                                      as a folded model file
//	stream            FLIPZERO_N_SHARDS   subject flipzero.N.shards: games
//	                                      from the workers, a work queue
//	                                      read by the durable consumer
//	                                      "trainer"
//
// Generations go KataGo's way: workers play continuously (a game that
// ends is followed at once by the next), swap each new network into their
// evaluators between two rounds of their searches, and tag every shard
// with the generation of the network playing when its games ended; the
// trainer counts the games it receives for a generation and trains when
// it has the config's games_per_generation. A shard played by a network
// more than MaxStale generations older than the one published when the
// shard reached the server is refused (its games would teach what the
// network has already outgrown), and a worker whose network is that old
// starts no game until a newer one loads. A shard waiting in the stream stays
// as fresh as it arrived: instead, workers pause while a generation's
// games wait for the trainer (back-pressure), so that self-play never
// runs further ahead of training than that.
//
// Nothing is lost or doubled: each shard has a random id, sent as the
// message's Nats-Msg-Id (JetStream drops a republished copy within its
// duplicate window) and used in the name of the file the trainer writes
// it to, atomically, before it acknowledges the message. A shard
// redelivered after a crash between the write and the acknowledgement is
// recognised by its id among the run folder's files, acknowledged and
// dropped, so a restarted trainer knows every shard it has ever stored.
//
// Everything from the network is untrusted: a message is checked (sizes
// before any allocation, the run's id, the game, format version, shapes,
// finite values, legal actions in range, policies that sum to one) and a
// bad one is logged with its reason and dropped, never trained on.
package cluster
