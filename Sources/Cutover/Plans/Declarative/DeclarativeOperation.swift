/// One operation of a declarative plan; the compiler turns each into statements of expand,
/// backfill, contract and their reverts.
public enum DeclarativeOperation: Sendable, Hashable {
    /// A new column (`add_column`): added nullable at expand, filled for old writers' rows and
    /// by the backfill from `up` (or `default`), its constraints enforced at contract.
    case addColumn(ColumnDefinition)
    /// A change of representation (`alter_column`): legacy columns to modern ones, both kept
    /// in sync from expand to contract, the legacy ones dropped at contract.
    case alterColumn(ColumnChange)
    /// A column new writers stop writing (`drop_column`): filled from `down` for old readers,
    /// dropped at contract.
    case dropColumn(name: String, down: SQLExpression)
    /// An index (`create_index`): built concurrently at expand, or at contract when unique.
    case createIndex(IndexDefinition)
    /// An index old readers may still need (`drop_index`): dropped at contract.
    case dropIndex(name: String)
    /// A table constraint (`add_constraint`): added `NOT VALID` and validated at contract.
    case addConstraint(ConstraintDefinition)
    /// A constraint the modern schema does without (`drop_constraint`): dropped at contract.
    case dropConstraint(name: String)
    /// NOT NULL on an existing column (`set_not_null`): NULLs filled from `up` by the trigger
    /// and the backfill, then enforced at contract the safe way.
    case setNotNull(column: String, up: SQLExpression?)
    /// Hand-written SQL files (`sql`): run after the generated expand, before the generated
    /// revert, and before contract's last file.
    case sql(HandWrittenSQL)
    /// A new name for the table (`rename_table`), in the same schema: from expand on, the new
    /// name is a view of the table for new writers; contract drops the view and renames the
    /// table, so old writers keep the table itself, and every statement, until contract.
    case renameTable(to: String)

    /// The operations' names as a plan spells them, in the order the reference lists them.
    public static let names = ["add_column", "alter_column", "drop_column", "create_index", "drop_index",
                               "add_constraint", "drop_constraint", "set_not_null", "rename_table", "sql"]

    /// A column the plan adds, as `add_column` or an `alter_column`'s `to` declares it.
    public struct ColumnDefinition: Sendable, Hashable {
        /// The column's name.
        public let name: String
        /// Its type as SQL, such as `smallint` or `varchar(255)`.
        public let type: String
        /// The value old writers' rows and the backfill get (add_column only).
        public let up: SQLExpression?
        /// The column default, set at contract when `up` is given and at expand otherwise.
        public let defaultValue: SQLExpression?
        /// Whether contract makes it NOT NULL.
        public let isNotNull: Bool
        /// Whether contract makes it unique, by an index built concurrently.
        public let isUnique: Bool
        /// A CHECK over the row, added NOT VALID and validated.
        public let check: SQLExpression?
        /// A foreign key, added NOT VALID and validated.
        public let references: ForeignKey?

        /// The expression that fills the column where a write leaves it NULL: `up`, else `default`.
        var fill: SQLExpression? { up ?? defaultValue }
    }

    /// An `alter_column`: the legacy columns, the modern ones, and the expressions between them.
    public struct ColumnChange: Sendable, Hashable {
        /// The legacy columns, dropped at contract.
        public let from: [String]
        /// The modern columns, added at expand.
        public let to: [ColumnDefinition]
        /// For each modern column, its value from the row (legacy → modern), in `to`'s order.
        public let up: [SQLExpression]
        /// For each legacy column, its value from the row (modern → legacy), in `from`'s order.
        public let down: [SQLExpression]
    }

    /// A foreign key's target.
    public struct ForeignKey: Sendable, Hashable {
        /// The referenced table.
        public let table: QualifiedName
        /// The referenced columns.
        public let columns: [String]
        /// `ON DELETE`'s action as SQL (`CASCADE`, `SET NULL`), nil for the default.
        public let onDelete: String?
    }

    /// A `create_index`.
    public struct IndexDefinition: Sendable, Hashable {
        /// The index's name, in the table's schema.
        public let name: String
        /// The indexed columns.
        public let columns: [String]
        /// Whether it is unique.
        public let isUnique: Bool
        /// The access method, `btree` unless given.
        public let method: String
        /// A partial index's predicate.
        public let predicate: SQLExpression?
    }

    /// An `add_constraint`.
    public struct ConstraintDefinition: Sendable, Hashable {
        /// The kinds of table constraint.
        public enum Kind: Sendable, Hashable {
            /// `CHECK (expression)`.
            case check(SQLExpression)
            /// `UNIQUE (columns)`, through an index built concurrently.
            case unique([String])
            /// `FOREIGN KEY (columns) REFERENCES …`.
            case foreignKey(columns: [String], references: ForeignKey)
        }
        /// The constraint's name.
        public let name: String
        /// What it enforces.
        public let kind: Kind
    }

    /// An `sql` operation's files, each list possibly empty.
    public struct HandWrittenSQL: Sendable, Hashable {
        /// Run at expand, after the generated files.
        public let expand: [PlanSQLFile]
        /// Run when expand is reverted, before the generated revert.
        public let revert: [PlanSQLFile]
        /// Run at contract, before its last (generated) file.
        public let contract: [PlanSQLFile]
    }
}
