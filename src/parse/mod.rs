//! Readers of foreign text: the agents' gate outputs, finding-verifier
//! verdicts and triage files. Every reader takes hostile input and returns
//! either a typed value or an error naming the input, the line and what was
//! expected. Never does I/O beyond what it is handed.
