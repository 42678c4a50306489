import Cutover

/// What ``RepresentationCompare`` found: how many rows it read, how many were not converted
/// yet, and each column of a row on which the two representations disagree.
public struct ComparisonReport: Sendable, Equatable {
    /// One column of one row whose value is not what the other representation says.
    public struct Disagreement: Sendable, Equatable {
        /// The row's key, each column's value as text in the key's order; nil when keys are hidden.
        public var key: [String]?
        /// The key hashed (``RepresentationComparison/keyHashSQL``), when keys are hidden.
        public var keyHash: String?
        /// The column whose value disagrees.
        public var column: String
        /// `up`: a modern column against what the legacy columns say; `down`: the reverse.
        public var direction: RepresentationComparison.Column.Direction
        /// What the other representation says the column should hold, as text; nil for NULL,
        /// or when values are hidden.
        public var expected: String?
        /// What the column holds, as text; nil for NULL, or when values are hidden.
        public var stored: String?
    }

    /// The plan's table.
    public var table: String
    /// The key's columns.
    public var keyColumns: [String]
    /// Whether the rows were a random sample (or every row).
    public var isSample: Bool
    /// Whether values were read (`expected` and `stored`); otherwise they never left the server.
    public var showsValues: Bool
    /// Whether keys were read hashed.
    public var hidesKeys: Bool
    /// Rows read.
    public var sampled: Int64
    /// Rows read whose modern columns of some `alter_column` are not filled yet: those
    /// columns were not compared.
    public var notConverted: Int64
    /// Rows with at least one disagreeing column.
    public var disagreeingRows: Int64
    /// Disagreeing columns, over every row.
    public var disagreements: Int64
    /// The disagreements listed, in key order: every column of up to the listing limit of rows.
    public var listed: [Disagreement]
    /// The rows ``listed`` covers.
    public var listedRows: Int64

    /// Rows read that were fully converted, and so compared in every column.
    public var compared: Int64 { sampled - notConverted }
    /// Whether every row read agrees in every column compared.
    public var isAgreeing: Bool { disagreements == 0 }
    /// Rows that disagree but are not listed.
    public var unlistedRows: Int64 { disagreeingRows - listedRows }
}
