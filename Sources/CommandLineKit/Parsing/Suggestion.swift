/// Finds the word a user probably meant, for "did you mean" in usage errors.
enum Suggestion {
    /// The candidate closest to `word` by edit distance (a swap of neighbours counts as one
    /// edit), if it is close enough: at most one edit per three characters of `word`, and at
    /// least one. Ties go to the candidate listed first.
    static func closest(to word: String, among candidates: [String]) -> String? {
        let allowed = max(1, word.count / 3)
        var best: (candidate: String, distance: Int)?
        for candidate in candidates where candidate != word {
            let distance = editDistance(word, candidate)
            if distance <= allowed && distance < (best?.distance ?? .max) {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and swaps of
    /// adjacent characters each cost one.
    static func editDistance(_ first: String, _ second: String) -> Int {
        let a = Array(first), b = Array(second)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let substitution = a[i - 1] == b[j - 1] ? 0 : 1
                var cost = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + substitution)
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    cost = min(cost, table[i - 2][j - 2] + 1)
                }
                table[i][j] = cost
            }
        }
        return table[a.count][b.count]
    }
}
