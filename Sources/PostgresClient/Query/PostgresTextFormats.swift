import Foundation

/// PostgreSQL's text forms of timestamps, in its ISO DateStyle (which every connection sets).
enum PostgresTimestamp {
    private static let utc = TimeZone(identifier: "UTC")!

    /// `2026-11-30 12:15:00.123456+00`
    static func format(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = utc
        let seconds = date.timeIntervalSince1970
        let whole = seconds.rounded(.down)
        var micros = Int(((seconds - whole) * 1_000_000).rounded())
        var base = Date(timeIntervalSince1970: whole)
        if micros >= 1_000_000 { micros -= 1_000_000; base += 1 }
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: base)
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(c.year!, 4))-\(pad(c.month!, 2))-\(pad(c.day!, 2)) "
            + "\(pad(c.hour!, 2)):\(pad(c.minute!, 2)):\(pad(c.second!, 2)).\(pad(micros, 6))+00"
    }

    /// Parses `YYYY-MM-DD[ HH:MM:SS[.ffffff]][±HH[:MM[:SS]]]`; a value without an offset is
    /// taken as UTC. `infinity` and BC dates are not representable and return nil.
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            index += count
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(45), let month = number(2), expect(45), let day = number(2)
        else { return nil }
        var components = DateComponents(calendar: Calendar(identifier: .gregorian), timeZone: utc,
                                        year: year, month: month, day: day, hour: 0, minute: 0, second: 0)
        var fraction = 0.0
        if expect(32) || expect(84) {
            guard let hour = number(2), expect(58), let minute = number(2), expect(58), let second = number(2)
            else { return nil }
            components.hour = hour; components.minute = minute; components.second = second
            if expect(46) {
                var scale = 0.1
                while index < bytes.count, bytes[index] >= 48 && bytes[index] <= 57 {
                    fraction += Double(bytes[index] - 48) * scale
                    scale /= 10
                    index += 1
                }
            }
        }
        var offset = 0
        if index < bytes.count {
            let sign: Int
            if expect(43) { sign = 1 } else if expect(45) { sign = -1 } else if expect(90) {
                return index == bytes.count ? components.date.map { $0 + fraction } : nil
            } else { return nil }
            guard let hours = number(2) else { return nil }
            var total = hours * 3600
            if expect(58) { guard let minutes = number(2) else { return nil }; total += minutes * 60 }
            if expect(58) { guard let seconds = number(2) else { return nil }; total += seconds }
            offset = sign * total
        }
        guard index == bytes.count, let date = components.date else { return nil }
        return date - TimeInterval(offset) + fraction
    }
}

/// `bytea` in PostgreSQL's hex text form, `\x0a1b…`.
enum PostgresBytes {
    private static let digits = Array("0123456789abcdef".utf8)

    static func hex<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        String(unsafeUninitializedCapacity: 2 + 2 * bytes.count) { out in
            out[0] = 92
            out[1] = 120
            var position = 2
            for byte in bytes {
                out[position] = digits[Int(byte >> 4)]
                out[position + 1] = digits[Int(byte & 0x0f)]
                position += 2
            }
            return position
        }
    }

    static func parse(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == 92, utf8[1] == 120, utf8.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: c - 48
            case 97...102: c - 87
            case 65...70: c - 55
            default: nil
            }
        }
        var result: [UInt8] = []
        result.reserveCapacity((utf8.count - 2) / 2)
        var i = 2
        while i < utf8.count {
            guard let high = value(utf8[i]), let low = value(utf8[i + 1]) else { return nil }
            result.append(high << 4 | low)
            i += 2
        }
        return result
    }
}
