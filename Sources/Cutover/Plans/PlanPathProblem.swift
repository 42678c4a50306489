/// What is wrong with a SQL file's path in a plan manifest.
public enum PlanPathProblem: Sendable, Hashable {
    /// The path starts with `/`; plan paths are relative to the plan folder.
    case absolute
    /// A component is `..`, which could leave the plan folder.
    case parentComponent
    /// A component is empty (`a//b.sql`, a trailing `/`) or `.`.
    case emptyComponent
    /// The path holds a backslash; `/` is the only separator.
    case backslash
    /// The path holds a character outside `A-Z a-z 0-9 _ . / -`.
    case forbiddenCharacter(Unicode.Scalar)
    /// The file name does not end in `.sql`, or is nothing but `.sql`.
    case notSQLFile
}
