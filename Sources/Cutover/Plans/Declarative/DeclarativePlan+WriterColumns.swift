extension DeclarativePlan {
    /// The columns each writer path writes while both formats are stored: the legacy writer the
    /// columns the plan changes or drops (`alter_column`'s `from`, `drop_column`), the modern
    /// writer the ones it adds (`alter_column`'s `to`, `add_column`). Never the key's columns or
    /// the revision column, which the save writes itself (a plan may add its revision column).
    ///
    /// The record store registers them, so that a save of exactly one path's columns runs the
    /// plan's own save function (`cutover.make_record_save`); an entity whose codecs write
    /// other columns is saved alike, by statements made at each call.
    public var writerColumns: (legacy: [String], modern: [String]) {
        var legacy: [String] = []
        var modern: [String] = []
        for operation in operations {
            switch operation {
            case .alterColumn(let change):
                legacy += change.from
                modern += change.to.map(\.name)
            case .addColumn(let column):
                modern.append(column.name)
            case .dropColumn(let name, _):
                legacy.append(name)
            case .createIndex, .dropIndex, .addConstraint, .dropConstraint, .setNotNull, .sql, .renameTable:
                break
            }
        }
        func unique(_ names: [String]) -> [String] {
            var seen: Set<String> = Set(key)
            if let revision { seen.insert(revision) }
            return names.filter { seen.insert($0).inserted }
        }
        return (unique(legacy), unique(modern))
    }
}
