import EphemeralPostgres
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP proxy in front of PostgreSQL that can lose a server's reply on purpose.
///
/// Every connection made to ``port`` is forwarded to the target. After
/// ``loseNextReplyToCommit()``, the next client write that commits is forwarded as usual, and
/// the server's reply to it (sent after the commit is done) reaches nobody: the proxy drops it
/// and closes both sides. That is the lost response of a real network, at the worst moment, for
/// tests of outcome-unknown handling.
package final class LossyProxy: Sendable {
    /// The loopback port clients connect to.
    package let port: Int
    private let listener: LoopbackSocket
    private let targetHost: String
    private let targetPort: Int
    /// What the next lost reply answers, while armed.
    private let armed = Mutex<Arming?>(nil)
    private let isHoldingClientBytes = Mutex(false)
    private let isStopped = Mutex(false)
    private let lostReplies = Mutex(0)
    private let clientWrites = Mutex(0)

    /// Starts a proxy to `host:port` on a free loopback port.
    package init(targetHost: String, targetPort: Int) throws {
        self.targetHost = targetHost
        self.targetPort = targetPort
        let socket = try LoopbackSocket(backlog: 64)
        listener = socket
        port = socket.port
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "cutover-lossy-proxy"
        thread.start()
    }

    /// The writes whose reply the proxy can lose.
    private enum Commit {
        /// A COMMIT: a simple query or a statement with that text, or a Bind of one prepared so.
        case explicit
        /// A COMMIT, or a statement the server commits on its own: a write with an Execute that
        /// ends with a Sync, sent while the server was outside a transaction block (its last
        /// ReadyForQuery said idle). The server runs such a statement in an implicit
        /// transaction and commits it at the Sync, before answering it; this is how
        /// `PostgresPool.pipelinedTransaction` commits, and also how a lone read ends.
        case any
    }

    /// The write whose reply the proxy loses next.
    private struct Arming {
        var commit: Commit
        /// Text the write's statement must hold (in a Parse or a simple query it sends, or in
        /// the statement a Bind of it names); nil for any statement.
        var statementText: [UInt8]?
    }

    /// Makes the server's reply to the next write that commits (a COMMIT, or a statement the
    /// server commits at its Sync) reach nobody, and cuts that connection.
    ///
    /// - Parameter text: when given, only a write whose statement holds this text: the one a
    ///   test means, where other sessions (a heartbeat, a poll of the writer path) send their
    ///   own statements through the proxy meanwhile.
    package func loseNextReplyToCommit(ofStatementContaining text: String? = nil) {
        armed.withLock { $0 = Arming(commit: .any, statementText: text.map { Array($0.utf8) }) }
    }

    /// Makes the server's reply to the next COMMIT reach nobody, and cuts that connection:
    /// for clients that run their statements in transactions they open and commit themselves,
    /// whose other statements outside a transaction must be answered.
    package func loseNextReplyToExplicitCommit() {
        armed.withLock { $0 = Arming(commit: .explicit, statementText: nil) }
    }

    /// Stops reading what clients send until ``releaseClientBytes()``, so that their sockets
    /// fill up and a large request cannot be written at once, as over a slow network.
    package func holdClientBytes() {
        isHoldingClientBytes.withLock { $0 = true }
    }

    /// Reads what clients send again.
    package func releaseClientBytes() {
        isHoldingClientBytes.withLock { $0 = false }
    }

    /// How many chunks clients have sent through the proxy so far: one per round trip for
    /// small messages.
    package var clientWriteCount: Int { clientWrites.withLock { $0 } }

    /// How many replies the proxy has lost so far.
    package var lostReplyCount: Int { lostReplies.withLock { $0 } }

    /// Stops accepting connections. Connections already made stay until either side closes.
    package func stop() {
        let wasStopped = isStopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !wasStopped else { return }
        // Wakes the accept loop; the descriptor is closed when the socket value goes away.
        shutdown(listener.descriptor, Int32(SHUT_RDWR))
    }

    deinit { stop() }

    private func acceptLoop() {
        while !isStopped.withLock({ $0 }) {
            let client = accept(listener.descriptor, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            // A program started meanwhile must not hold the connection open after the proxy closes it.
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            guard let server = connectToTarget() else {
                close(client)
                continue
            }
            let thread = Thread { [self] in pump(client: client, server: server) }
            thread.name = "cutover-lossy-proxy-pump"
            thread.start()
        }
    }

    private func connectToTarget() -> Int32? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(targetHost, String(targetPort), &hints, &found) == 0, let first = found else { return nil }
        defer { freeaddrinfo(found) }
        let descriptor = socket(first.pointee.ai_family, first.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), first.pointee.ai_protocol)
        guard descriptor >= 0, connect(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            if descriptor >= 0 { close(descriptor) }
            return nil
        }
        return descriptor
    }

    /// Copies bytes both ways until either side closes, losing a reply when armed.
    private func pump(client: Int32, server: Int32) {
        defer {
            close(client)
            close(server)
        }
        var descriptors = [pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: server, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var losingReply = false
        // The text of each statement the client prepared by name, for a Bind that names one.
        var preparedTexts: [[UInt8]: [UInt8]] = [:]
        // Whether the server is outside a transaction block, as its last ReadyForQuery said,
        // and the last bytes it sent, in which to find one split across two reads.
        var isServerIdle = false
        var serverTail: [UInt8] = []
        while true {
            let isHolding = isHoldingClientBytes.withLock { $0 }
            descriptors[0].events = isHolding ? 0 : Int16(POLLIN)
            descriptors[0].revents = 0
            descriptors[1].revents = 0
            let ready = poll(&descriptors, 2, isHolding ? 10 : 1000)
            if ready < 0 && errno != EINTR { return }
            if ready <= 0 { continue }
            // A descriptor closed under the proxy: nothing more can pass either way.
            if (descriptors[0].revents | descriptors[1].revents) & Int16(POLLNVAL) != 0 { return }
            // Held since the poll began: bytes sent after holdClientBytes() stay unread.
            let isHeldNow = isHoldingClientBytes.withLock { $0 }
            if !isHeldNow, descriptors[0].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                let count = recv(client, &buffer, buffer.count, 0)
                guard count > 0 else { return }
                let chunk = buffer[0..<count]
                clientWrites.withLock { $0 += 1 }
                let commits = chunk.commits(preparedTexts: &preparedTexts)
                if !losingReply, commits != .none {
                    let isIdle = isServerIdle
                    losingReply = armed.withLock { armed in
                        guard let arming = armed else { return false }
                        let isCommit = switch arming.commit {
                        case .explicit: commits == .explicit
                        case .any: commits == .explicit || isIdle
                        }
                        let matches = isCommit
                            && arming.statementText.map { chunk.statements(preparedTexts: preparedTexts).contains(text: $0) } ?? true
                        if matches { armed = nil }
                        return matches
                    }
                }
                guard sendAll(server, chunk) else { return }
            }
            if descriptors[1].revents != 0 {
                let count = recv(server, &buffer, buffer.count, 0)
                guard count > 0 else { return }
                if losingReply {
                    // The server has answered, so it has committed; nobody hears about it.
                    lostReplies.withLock { $0 += 1 }
                    Glibc.shutdown(client, Int32(SHUT_RDWR))
                    return
                }
                // A ReadyForQuery ('Z', length 5, status) ends what the server sends before it
                // waits for the client: its status byte is 'I' outside a transaction block.
                serverTail = Array((serverTail + buffer[max(0, count - 6)..<count]).suffix(6))
                if serverTail.count == 6, serverTail[0] == UInt8(ascii: "Z"), serverTail[1..<5].elementsEqual([0, 0, 0, 5]) {
                    isServerIdle = serverTail[5] == UInt8(ascii: "I")
                }
                guard sendAll(client, buffer[0..<count]) else { return }
            }
        }
    }

    private func sendAll(_ descriptor: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let sent = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }
}

/// What a client write may commit, as ``ArraySlice/commits(preparedTexts:)`` reads it.
private enum WriteCommits {
    case none
    /// It runs a COMMIT.
    case explicit
    /// It runs a statement and ends with a Sync: outside a transaction block, the server commits
    /// that statement at the Sync.
    case atSync
}

/// One frontend message of a client write: its type byte and the fields of its body up to the
/// third NUL (a Parse's name and text, a Bind's portal and statement), or the whole body.
private struct FrontendMessage {
    let type: UInt8
    let body: ArraySlice<UInt8>

    var fields: [ArraySlice<UInt8>] { body.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false) }
}

extension ArraySlice<UInt8> {
    /// The frontend messages of a client write; nil when it is not a sequence of whole ones.
    private var frontendMessages: [FrontendMessage]? {
        var messages: [FrontendMessage] = []
        var index = startIndex
        while index < endIndex {
            guard index + 5 <= endIndex else { return nil }
            let length = self[index + 1..<index + 5].reduce(0) { $0 << 8 | Int($1) }
            guard length >= 4, index + 1 + length <= endIndex else { return nil }
            messages.append(FrontendMessage(type: self[index], body: self[index + 5..<index + 1 + length]))
            index += 1 + length
        }
        return messages
    }

    /// Whether a client write runs a COMMIT (a simple query or an unnamed statement with the
    /// text COMMIT, or a Bind of a statement prepared as COMMIT), or else an Execute and then a
    /// Sync as its last message. The text of every statement it prepares by name is noted in
    /// `preparedTexts` (the write that prepares a COMMIT commits nothing). A write that is not a
    /// sequence of whole frontend messages is searched for the text COMMIT alone.
    fileprivate func commits(preparedTexts: inout [[UInt8]: [UInt8]]) -> WriteCommits {
        let commit = Array("COMMIT".utf8)
        let byText = containsText(commit) ? WriteCommits.explicit : .none
        guard let messages = frontendMessages else { return byText }
        var carries = false
        for message in messages {
            switch message.type {
            case UInt8(ascii: "P"):
                let fields = message.fields
                guard fields.count >= 2 else { return byText }
                if !fields[0].isEmpty { preparedTexts[Array(fields[0])] = Array(fields[1]) }
                let preparesCommit = !fields[0].isEmpty && fields[1].elementsEqual(commit)
                if !preparesCommit && fields[1].containsText(commit) { carries = true }
            case UInt8(ascii: "B"):
                let fields = message.fields
                guard fields.count >= 2 else { return byText }
                if preparedTexts[Array(fields[1])] == commit { carries = true }
            case UInt8(ascii: "Q"):
                if message.body.containsText(commit) { carries = true }
            default:
                break
            }
        }
        if carries { return .explicit }
        let executes = messages.contains { $0.type == UInt8(ascii: "E") }
        return executes && messages.last?.type == UInt8(ascii: "S") ? .atSync : .none
    }

    /// The statements a client write runs or prepares: the text of each Parse and simple
    /// query in it, and of each named statement a Bind in it runs; the whole write when it is
    /// not a sequence of whole frontend messages.
    fileprivate func statements(preparedTexts: [[UInt8]: [UInt8]]) -> [ArraySlice<UInt8>] {
        guard let messages = frontendMessages else { return [self] }
        return messages.compactMap { message in
            switch message.type {
            case UInt8(ascii: "P"): message.fields.dropFirst().first
            case UInt8(ascii: "B"): message.fields.dropFirst().first.flatMap { preparedTexts[Array($0)] }.map { $0[...] }
            case UInt8(ascii: "Q"): message.body
            default: nil
            }
        }
    }

    fileprivate func containsText(_ needle: [UInt8]) -> Bool {
        guard count >= needle.count else { return false }
        var index = startIndex
        while index <= endIndex - needle.count {
            if self[index] == needle[0], self[index..<index + needle.count].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}

extension [ArraySlice<UInt8>] {
    /// Whether one of these statements holds `text`.
    fileprivate func contains(text: [UInt8]) -> Bool {
        contains { $0.containsText(text) }
    }
}
