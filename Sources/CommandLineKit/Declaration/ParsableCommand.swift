/// A type that a command of a ``CommandSpec`` tree stands for.
///
/// Name it in the command's spec (`CommandSpec("backfill", …, command: Backfill.self)`); the
/// parser hands it back as ``ParsedCommand/command`` for the command the words chose, so that
/// a program makes and runs its command without matching words. A program refines this with
/// what it needs to make and run its commands, as `phase`'s `PhaseCommand` does.
public protocol ParsableCommand: Sendable {}
