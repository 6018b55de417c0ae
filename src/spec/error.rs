//! Command errors: one enum, rendered to Valkey's exact error text in one place.
//!
//! Handlers return `Err(CmdError::...)`; dispatch writes the text and counts it in
//! errorstats under its code (the first word).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

/// `extended-redis-compatibility`: the texts that name the server say "Redis" instead of
/// "Valkey" (Valkey keeps them in shared objects rebuilt when the config changes; here a
/// process-wide flag that the configuration sets at start-up and on CONFIG SET).
static REDIS_COMPAT: AtomicBool = AtomicBool::new(false);

pub fn set_redis_compat(on: bool) {
    REDIS_COMPAT.store(on, Ordering::Relaxed);
}

/// Whether `extended-redis-compatibility` is on.
pub fn redis_compat() -> bool {
    REDIS_COMPAT.load(Ordering::Relaxed)
}

/// The server's name in error texts: "Valkey", or "Redis" under
/// `extended-redis-compatibility`.
pub fn server_title() -> &'static str {
    if redis_compat() {
        "Redis"
    } else {
        "Valkey"
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CmdError {
    /// `-ERR syntax error`
    Syntax,
    WrongType,
    NotInteger,
    NotFloat,
    Overflow,
    /// `-ERR increment or decrement would overflow`
    IncrOverflow,
    /// `-ERR increment would produce NaN or Infinity`
    NanOrInfinity,
    NoSuchKey,
    /// `-ERR DB index is out of range`
    DbIndexOutOfRange,
    /// `-ERR invalid expire time in '<cmd>' command`
    InvalidExpire(String),
    /// `-ERR numfields should be greater than 0 and match the provided number of fields`
    /// (the hash field expiration commands' FIELDS block)
    NumFields,
    /// `-ERR value is out of range, must be positive`
    OutOfRangePositive,
    /// `-ERR string exceeds maximum allowed size (proto-max-bulk-len)`
    StringTooLong,
    /// `-ERR wrong number of arguments for '<cmd>' command`
    WrongArity(String),
    /// `-ERR unknown subcommand '<sub>'. Try <CMD> HELP.` (`sub` echoed raw)
    UnknownSubcommand {
        sub: Vec<u8>,
        cmd: String,
    },
    /// `-ERR <OPTION> option can only be used in <CMD>` (SCAN's NOVALUES and NOSCORES)
    ScanOptionOnlyIn(&'static str, &'static str),
    /// `-ERR unknown type name '<name>'` (SCAN ... TYPE; the name echoed raw)
    UnknownTypeName(Vec<u8>),
    /// `-NOAUTH Authentication required.`
    NoAuth,
    /// `-OOM command not allowed when used memory > 'maxmemory'.`
    Oom,
    /// `-NOREPLICAS Not enough good replicas to write.` (min-replicas-to-write)
    NoReplicas,
    /// `-READONLY You can't write against a read only replica.`
    ReadOnlyReplica,
    /// `-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.`
    MasterDown,
    /// `-ERR WAIT cannot be used with replica instances...`
    WaitOnReplica,
    /// `-ERR Invalid command specified` (COMMAND GETKEYS of an unknown command)
    GetKeysUnknownCommand,
    /// `-ERR The command has no key arguments`
    GetKeysNoKeyArgs,
    /// `-ERR Invalid number of arguments specified for command`
    GetKeysWrongArity,
    /// `-ERR Invalid arguments specified for command`
    GetKeysInvalidArgs,
    /// `-ERR The server is running without a config file`
    NoConfigFile,
    /// `-ERR CONFIG SET failed (possibly related to argument '<name>') - <reason>`: the
    /// running server could not act on a value CONFIG SET accepted; every value of that
    /// CONFIG SET was put back.
    ConfigApply(ApplyFailure),
    // Connection, CLIENT and server commands.
    /// `-ERR AUTH <password> called without any password configured for the default user...`
    AuthNoPassword,
    /// `-WRONGPASS invalid username-password pair or user is disabled.`
    WrongPass,
    /// `-NOPROTO unsupported protocol version`
    NoProto,
    /// `-ERR Protocol version is not an integer or out of range`
    ProtoNotInteger,
    /// `-ERR Syntax error in HELLO option '<opt>'`
    HelloSyntax(String),
    /// `-NOAUTH HELLO must be called with the client already authenticated, ...`
    HelloNoAuth,
    /// `-ERR Client names cannot contain spaces, newlines or special characters.`
    BadClientName,
    /// `-ERR <attr> cannot contain spaces, newlines or special characters.`
    BadClientAttr(String),
    /// `-ERR Unrecognized option '<opt>'`
    UnrecognizedOption(String),
    /// `-ERR timeout is not an integer or out of range`
    TimeoutNotInteger,
    /// `-ERR timeout is negative`
    TimeoutNegative,
    /// `-ERR timeout is out of range`
    TimeoutOutOfRange,
    /// `-ERR CLIENT PAUSE mode must be WRITE or ALL`
    PauseMode,
    /// `-ERR No such client`
    NoSuchClient,
    /// `-ERR client-id should be greater than 0`
    ClientIdNotPositive,
    /// `-ERR Unknown client type '<type>'`
    UnknownClientType(String),
    /// `-ERR No such user '<user>'`
    NoSuchUser(String),
    /// `-ERR <what> is not an integer or out of range` (CLIENT LIST/KILL `maxage`, `idle`)
    FilterNotInteger(&'static str),
    /// `-ERR <what> should be greater than 0` (CLIENT LIST/KILL `maxage`, `idle`)
    FilterNotPositive(&'static str),
    /// `-ERR DB is not an integer or out of range` (CLIENT LIST/KILL `DB`)
    FilterDbNotInteger,
    /// `-ERR DB number should be between 0 and <last>`
    FilterDbRange(usize),
    /// `-ERR Unknown <flags|capa> found in the <provided filter|NOT-FLAGS filter>: <value>`
    FilterLetters {
        what: &'static str,
        negated: bool,
        value: String,
    },
    /// `-ERR type should be one of the following: slow, large-request, large-reply`
    CommandLogType,
    /// `-ERR unknown subcommand or wrong number of arguments for '<sub>'. Try <CMD> HELP.`
    SubcommandSyntax {
        sub: String,
        cmd: String,
    },
    /// `-ERR count should be greater than or equal to -1`
    SlowlogCount,
    /// `-ERR DEBUG command not allowed. If the enable-debug-command option is set to ...`
    DebugNotAllowed,
    /// `-ERR No shutdown in progress.`
    NoShutdownInProgress,
    /// `-ERR No samples available for event '<event>'` (LATENCY GRAPH)
    NoLatencySamples(String),
    // Persistence (SAVE, BGSAVE, SHUTDOWN, DEBUG RELOAD).
    /// `-MISCONF Valkey is configured to save RDB snapshots, ...` (stop-writes-on-bgsave-error)
    BgsaveMisconf,
    /// `-MISCONF Errors writing to the AOF file: <error>`
    AofMisconf(String),
    /// `-ERR` alone: a save failed (SAVE, DEBUG RELOAD; the log says why)
    SaveFailed,
    /// `-ERR Background save already in progress`
    BgsaveInProgress,
    /// `-ERR Another child process is active (AOF?): can't BGSAVE right now. ...`
    BgsaveChildActive,
    /// `-ERR Errors trying to SHUTDOWN. Check logs.`
    ShutdownFailed,
    /// `-ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.`
    DebugReloadOption,
    /// The errors of DEBUG's inspection and testing subcommands, Valkey 9.1's texts.
    Debug(DebugError),
    /// `-ERR Error trying to load the RDB dump, check server logs.`
    RdbLoadFailed,
    /// `-ERR value is out of range, value must between <min> and <max>` (Valkey's wording)
    OutOfRangeBetween {
        min: i64,
        max: i64,
    },
    /// `-ERR source and destination objects are the same`
    SameObject,
    /// `-ERR invalid cursor`
    InvalidCursor,
    /// `-ERR invalid first DB index` / `-ERR invalid second DB index` (SWAPDB)
    InvalidDbIndex(DbIndexArg),
    /// `-ERR Unsupported option <opt>` (EXPIRE and friends)
    UnsupportedOption(String),
    /// `-ERR NX and XX, GT or LT options at the same time are not compatible`
    ExpireNxConflict,
    /// `-ERR GT and LT options at the same time are not compatible`
    ExpireGtLtConflict,
    /// `-ERR An LFU maxmemory policy is not selected, access frequency not tracked. ...`
    LfuNotSelected,
    /// `-ERR An LFU maxmemory policy is selected, idle time not tracked. ...`
    LfuSelected,
    // String commands.
    /// `-ERR decrement would overflow` (DECRBY of i64::MIN)
    DecrementOverflow,
    /// `-ERR offset is out of range` (SETRANGE)
    OffsetOutOfRange,
    /// `-ERR The specified keys must contain string values` (LCS)
    LcsNotStrings,
    /// `-ERR If you want both the length and indexes, please just use IDX.`
    LcsIdxAndLen,
    /// `-ERR String too long for LCS`
    LcsTooLong,
    /// `-ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len`
    LcsTooMuchMemory,
    // Hash commands.
    /// `-ERR hash value is not an integer` (HINCRBY)
    HashValueNotInteger,
    /// `-ERR hash value is not a float` (HINCRBYFLOAT)
    HashValueNotFloat,
    /// `-ERR value is NaN or Infinity` (HINCRBYFLOAT's increment)
    ValueNanOrInfinity,
    // Sorted set commands.
    /// `-ERR XX and NX options at the same time are not compatible`
    ZXxNx,
    /// `-ERR GT, LT, and/or NX options at the same time are not compatible`
    ZGtLtNx,
    /// `-ERR INCR option supports a single increment-element pair`
    ZIncrPair,
    /// `-ERR resulting score is not a number (NaN)`
    ZScoreNan,
    /// `-ERR min or max is not a float`
    ZMinMaxNotFloat,
    /// `-ERR min or max not valid string range item`
    ZMinMaxNotLex,
    /// `-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX`
    ZLimitNeedsBy,
    /// `-ERR syntax error, WITHSCORES not supported in combination with BYLEX`
    ZWithscoresBylex,
    /// `-ERR at least 1 input key is needed for '<cmd>' command`
    ZNeedsInputKey(String),
    /// `-ERR weight value is not a float`
    ZWeightNotFloat,
    // Shared by the aggregate families.
    /// `-ERR LIMIT can't be negative` (SINTERCARD, ZINTERCARD)
    LimitNegative,
    /// `-ERR numkeys should be greater than 0` (SINTERCARD, LMPOP, ZMPOP and their blocking
    /// forms)
    NumkeysNotPositive,
    /// `-ERR Number of keys can't be greater than number of args` (SINTERCARD; ZINTERCARD
    /// answers a syntax error)
    NumkeysOverArgs,
    /// `-ERR count should be greater than 0` (COUNT of LMPOP, ZMPOP and their blocking forms)
    CountNotPositive,
    /// `-ERR timeout is not a float or out of range` (the blocking list and sorted set
    /// commands)
    TimeoutNotFloat,
    // List commands.
    /// `-ERR index out of range` (LSET)
    IndexOutOfRange,
    /// `-ERR RANK can't be zero: use 1 to start from the first match, ...` (LPOS)
    ListRankZero,
    /// `-ERR COUNT can't be negative` (LPOS)
    ListCountNegative,
    /// `-ERR MAXLEN can't be negative` (LPOS)
    ListMaxlenNegative,
    /// `-ERR One or more scores can't be converted into double` (SORT)
    SortScoreNotDouble,
    // Pub/sub.
    /// `-ERR Can't execute '<cmd>': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT /
    /// RESET are allowed in this context` (RESP2 subscriber mode)
    PubSubContext(String),
    /// `-ERR <CMD> isn't allowed for a DENY BLOCKING client` (SSUBSCRIBE inside EXEC)
    DenyBlocking(&'static str),
    /// Any other text, verbatim (must start with its code, e.g. `ERR ...`).
    Other(String),
    /// A text that echoes the client's own bytes (not always UTF-8), verbatim: Valkey sends
    /// them raw, so they never pass through a `String` (see [`CmdError::to_bytes`]).
    Raw(Vec<u8>),
    // MIGRATE.
    /// `-ERR When using MIGRATE KEYS option, the key argument must be set to the empty string`
    MigrateKeysWithKey,
    /// `-IOERR error or timeout reading to target instance` (or `writing`: what failed)
    MigrateIo {
        writing: bool,
    },
    /// `-ERR Target instance replied with error: <its error without the '-'>`, echoed raw
    MigrateTarget(Vec<u8>),
    /// CLIENT UNBLOCK with a reason other than TIMEOUT or ERROR.
    UnblockReason,
    /// CLIENT TRACKING and CLIENT CACHING (see [`TrackingError`]).
    Tracking(TrackingError),
    /// MULTI, EXEC, DISCARD and WATCH (see [`MultiError`]).
    Multi(MultiError),
    /// EVAL, FCALL, SCRIPT, FUNCTION and commands called from scripts (see [`ScriptError`]).
    Script(ScriptError),
}

/// What the running server could not do for a CONFIG SET ([`CmdError::ConfigApply`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApplyFailure {
    /// A listener of the new `bind` list could not be opened.
    Bind,
    /// A listener could not be opened on the new `port`.
    Port,
    /// `appendonly yes`: the AOF could not start (no directory, no file, no fork).
    Appendonly,
}

impl ApplyFailure {
    /// The directive the error names (Valkey names the directive being applied).
    pub fn directive(self) -> &'static str {
        match self {
            ApplyFailure::Bind => "bind",
            ApplyFailure::Port => "port",
            ApplyFailure::Appendonly => "appendonly",
        }
    }

    fn reason(self) -> &'static str {
        match self {
            ApplyFailure::Bind => "Failed to bind to specified addresses.",
            ApplyFailure::Port => "Unable to listen on this port. Check server logs.",
            ApplyFailure::Appendonly => "Unable to turn on AOF. Check server logs.",
        }
    }
}

/// DEBUG's own errors (LISTPACK, QUICKLIST, SDSLEN, HTSTATS, QUICKLIST-PACKED-THRESHOLD,
/// CLIENT-EVICTION, RESTART).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DebugError {
    NotListpack,
    NotQuicklist,
    NotSds,
    NotHashtable,
    DbOutOfRange,
    PackedThreshold,
    ClientEvictionOff,
    RestartFailed,
}

impl DebugError {
    pub fn text(self) -> &'static str {
        match self {
            DebugError::NotListpack => "ERR Not a listpack encoded object.",
            DebugError::NotQuicklist => "ERR Not a quicklist encoded object.",
            DebugError::NotSds => "ERR Not an sds encoded string.",
            DebugError::NotHashtable => {
                "ERR The value stored at the specified key is not represented using an hash table"
            }
            DebugError::DbOutOfRange => "ERR Out of range database",
            DebugError::PackedThreshold => {
                "ERR argument must be a memory value bigger than 1 and smaller than 4gb"
            }
            DebugError::ClientEvictionOff => "ERR maxmemory-clients is disabled.",
            DebugError::RestartFailed => "ERR failed to restart the server. Check server logs.",
        }
    }
}

impl CmdError {
    /// `ERR <text>`.
    pub fn err(text: impl Into<String>) -> CmdError {
        let t = text.into();
        CmdError::Other(format!("ERR {t}"))
    }

    /// The error code (first word) for errorstats.
    pub fn code(&self) -> String {
        let s = self.to_string();
        s.split(' ').next().unwrap_or("ERR").to_string()
    }
}

impl CmdError {
    /// The error text as sent (without the leading `-`): the client's bytes that some
    /// errors echo stay as they came, where `Display` would have to replace what is not
    /// UTF-8.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Valkey formats the echoed bytes as a C string: a NUL ends them.
        let with = |head: &str, raw: &[u8], tail: &str| {
            let raw = &raw[..raw.iter().position(|&c| c == 0).unwrap_or(raw.len())];
            [head.as_bytes(), raw, tail.as_bytes()].concat()
        };
        match self {
            CmdError::UnknownSubcommand { sub, cmd } => {
                with("ERR unknown subcommand '", sub, &format!("'. Try {cmd} HELP."))
            }
            CmdError::UnknownTypeName(name) => with("ERR unknown type name '", name, "'"),
            CmdError::Raw(text) => text.clone(),
            CmdError::MigrateTarget(text) => {
                with("ERR Target instance replied with error: ", text, "")
            }
            other => other.to_string().into_bytes(),
        }
    }
}

impl fmt::Display for CmdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CmdError::ReadOnlyReplica => {
                f.write_str("READONLY You can't write against a read only replica.")
            }
            CmdError::MasterDown => f.write_str(
                "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
            ),
            CmdError::WaitOnReplica => f.write_str(
                "ERR WAIT cannot be used with replica instances. Please also note that since \
                 Redis 4.0 if a replica is configured to be writable (which is not the default) \
                 writes to replicas are just local and are not propagated.",
            ),
            CmdError::NoReplicas => f.write_str("NOREPLICAS Not enough good replicas to write."),
            CmdError::Syntax => f.write_str("ERR syntax error"),
            CmdError::WrongType => {
                f.write_str("WRONGTYPE Operation against a key holding the wrong kind of value")
            }
            CmdError::NotInteger => f.write_str("ERR value is not an integer or out of range"),
            CmdError::NotFloat => f.write_str("ERR value is not a valid float"),
            CmdError::Overflow => f.write_str("ERR value is out of range"),
            CmdError::IncrOverflow => f.write_str("ERR increment or decrement would overflow"),
            CmdError::NanOrInfinity => f.write_str("ERR increment would produce NaN or Infinity"),
            CmdError::NoSuchKey => f.write_str("ERR no such key"),
            CmdError::DbIndexOutOfRange => f.write_str("ERR DB index is out of range"),
            CmdError::InvalidExpire(cmd) => write!(f, "ERR invalid expire time in '{cmd}' command"),
            CmdError::NumFields => f.write_str(
                "ERR numfields should be greater than 0 and match the provided number of fields",
            ),
            CmdError::OutOfRangePositive => {
                f.write_str("ERR value is out of range, must be positive")
            }
            CmdError::StringTooLong => {
                f.write_str("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
            }
            CmdError::WrongArity(cmd) => {
                write!(f, "ERR wrong number of arguments for '{cmd}' command")
            }
            CmdError::UnknownSubcommand { .. }
            | CmdError::UnknownTypeName(_)
            | CmdError::Raw(_)
            | CmdError::MigrateTarget(_) => {
                f.write_str(&String::from_utf8_lossy(&self.to_bytes()))
            }
            CmdError::ScanOptionOnlyIn(opt, cmd) => {
                write!(f, "ERR {opt} option can only be used in {cmd}")
            }
            CmdError::MigrateKeysWithKey => f.write_str(
                "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string",
            ),
            CmdError::MigrateIo { writing } => write!(
                f,
                "IOERR error or timeout {} to target instance",
                if *writing { "writing" } else { "reading" }
            ),
            CmdError::NoAuth => f.write_str("NOAUTH Authentication required."),
            CmdError::Oom => f.write_str("OOM command not allowed when used memory > 'maxmemory'."),
            CmdError::GetKeysUnknownCommand => f.write_str("ERR Invalid command specified"),
            CmdError::GetKeysNoKeyArgs => f.write_str("ERR The command has no key arguments"),
            CmdError::GetKeysWrongArity => {
                f.write_str("ERR Invalid number of arguments specified for command")
            }
            CmdError::GetKeysInvalidArgs => {
                f.write_str("ERR Invalid arguments specified for command")
            }
            CmdError::NoConfigFile => {
                f.write_str("ERR The server is running without a config file")
            }
            CmdError::ConfigApply(what) => write!(
                f,
                "ERR CONFIG SET failed (possibly related to argument '{}') - {}",
                what.directive(),
                what.reason()
            ),
            CmdError::AuthNoPassword => f.write_str(
                "ERR AUTH <password> called without any password configured for the default \
                 user. Are you sure your configuration is correct?",
            ),
            CmdError::WrongPass => {
                f.write_str("WRONGPASS invalid username-password pair or user is disabled.")
            }
            CmdError::NoProto => f.write_str("NOPROTO unsupported protocol version"),
            CmdError::ProtoNotInteger => {
                f.write_str("ERR Protocol version is not an integer or out of range")
            }
            CmdError::HelloSyntax(opt) => write!(f, "ERR Syntax error in HELLO option '{opt}'"),
            CmdError::HelloNoAuth => f.write_str(
                "NOAUTH HELLO must be called with the client already authenticated, otherwise \
                 the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and \
                 select the RESP protocol version at the same time",
            ),
            CmdError::BadClientName => f.write_str(
                "ERR Client names cannot contain spaces, newlines or special characters.",
            ),
            CmdError::BadClientAttr(attr) => {
                write!(f, "ERR {attr} cannot contain spaces, newlines or special characters.")
            }
            CmdError::UnrecognizedOption(opt) => write!(f, "ERR Unrecognized option '{opt}'"),
            CmdError::TimeoutNotInteger => {
                f.write_str("ERR timeout is not an integer or out of range")
            }
            CmdError::TimeoutNegative => f.write_str("ERR timeout is negative"),
            CmdError::TimeoutOutOfRange => f.write_str("ERR timeout is out of range"),
            CmdError::PauseMode => f.write_str("ERR CLIENT PAUSE mode must be WRITE or ALL"),
            CmdError::NoSuchClient => f.write_str("ERR No such client"),
            CmdError::ClientIdNotPositive => f.write_str("ERR client-id should be greater than 0"),
            CmdError::UnknownClientType(t) => write!(f, "ERR Unknown client type '{t}'"),
            CmdError::NoSuchUser(u) => write!(f, "ERR No such user '{u}'"),
            CmdError::NoLatencySamples(e) => write!(f, "ERR No samples available for event '{e}'"),
            CmdError::FilterNotInteger(what) => {
                write!(f, "ERR {what} is not an integer or out of range")
            }
            CmdError::FilterNotPositive(what) => write!(f, "ERR {what} should be greater than 0"),
            CmdError::FilterDbNotInteger => f.write_str("ERR DB is not an integer or out of range"),
            CmdError::FilterDbRange(last) => {
                write!(f, "ERR DB number should be between 0 and {last}")
            }
            CmdError::FilterLetters { what, negated: false, value } => {
                write!(f, "ERR Unknown {what} found in the provided filter: {value}")
            }
            CmdError::FilterLetters { what, negated: true, value } => write!(
                f,
                "ERR Unknown {what} found in the NOT-{} filter: {value}",
                what.to_ascii_uppercase()
            ),
            CmdError::CommandLogType => f.write_str(
                "ERR type should be one of the following: slow, large-request, large-reply",
            ),
            CmdError::SubcommandSyntax { sub, cmd } => write!(
                f,
                "ERR unknown subcommand or wrong number of arguments for '{sub}'. Try {cmd} HELP."
            ),
            CmdError::SlowlogCount => {
                f.write_str("ERR count should be greater than or equal to -1")
            }
            CmdError::DebugNotAllowed => f.write_str(
                "ERR DEBUG command not allowed. If the enable-debug-command option is set to \
                 \"local\", you can run it from a local connection, otherwise you need to set \
                 this option in the configuration file, and then restart the server.",
            ),
            CmdError::NoShutdownInProgress => f.write_str("ERR No shutdown in progress."),
            CmdError::BgsaveMisconf => write!(
                f,
                "MISCONF {title} is configured to save RDB snapshots, but it's currently unable to \
                 persist to disk. Commands that may modify the data set are disabled, because \
                 this instance is configured to report errors during writes if RDB snapshotting \
                 fails (stop-writes-on-bgsave-error option). Please check the {title} logs for \
                 details about the RDB error.",
                title = server_title()
            ),
            CmdError::AofMisconf(e) => write!(f, "MISCONF Errors writing to the AOF file: {e}"),
            CmdError::SaveFailed => f.write_str("ERR"),
            CmdError::BgsaveInProgress => f.write_str("ERR Background save already in progress"),
            CmdError::BgsaveChildActive => f.write_str(
                "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE \
                 SCHEDULE in order to schedule a BGSAVE whenever possible.",
            ),
            CmdError::ShutdownFailed => f.write_str("ERR Errors trying to SHUTDOWN. Check logs."),
            CmdError::DebugReloadOption => {
                f.write_str("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
            }
            CmdError::Debug(e) => f.write_str(e.text()),
            CmdError::RdbLoadFailed => {
                f.write_str("ERR Error trying to load the RDB dump, check server logs.")
            }
            CmdError::OutOfRangeBetween { min, max } => {
                write!(f, "ERR value is out of range, value must between {min} and {max}")
            }
            CmdError::SameObject => f.write_str("ERR source and destination objects are the same"),
            CmdError::InvalidCursor => f.write_str("ERR invalid cursor"),
            CmdError::InvalidDbIndex(DbIndexArg::First) => {
                f.write_str("ERR invalid first DB index")
            }
            CmdError::InvalidDbIndex(DbIndexArg::Second) => {
                f.write_str("ERR invalid second DB index")
            }
            CmdError::UnsupportedOption(opt) => write!(f, "ERR Unsupported option {opt}"),
            CmdError::ExpireNxConflict => {
                f.write_str("ERR NX and XX, GT or LT options at the same time are not compatible")
            }
            CmdError::ExpireGtLtConflict => {
                f.write_str("ERR GT and LT options at the same time are not compatible")
            }
            CmdError::LfuNotSelected => f.write_str(
                "ERR An LFU maxmemory policy is not selected, access frequency not tracked. \
                 Please note that when switching between policies at runtime LRU and LFU data \
                 will take some time to adjust.",
            ),
            CmdError::LfuSelected => f.write_str(
                "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that \
                 when switching between policies at runtime LRU and LFU data will take some \
                 time to adjust.",
            ),
            CmdError::DecrementOverflow => f.write_str("ERR decrement would overflow"),
            CmdError::OffsetOutOfRange => f.write_str("ERR offset is out of range"),
            CmdError::LcsNotStrings => {
                f.write_str("ERR The specified keys must contain string values")
            }
            CmdError::LcsIdxAndLen => {
                f.write_str("ERR If you want both the length and indexes, please just use IDX.")
            }
            CmdError::LcsTooLong => f.write_str("ERR String too long for LCS"),
            CmdError::LcsTooMuchMemory => f.write_str(
                "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len",
            ),
            CmdError::HashValueNotInteger => f.write_str("ERR hash value is not an integer"),
            CmdError::HashValueNotFloat => f.write_str("ERR hash value is not a float"),
            CmdError::ValueNanOrInfinity => f.write_str("ERR value is NaN or Infinity"),
            CmdError::ZXxNx => f.write_str("ERR XX and NX options at the same time are not compatible"),
            CmdError::ZGtLtNx => {
                f.write_str("ERR GT, LT, and/or NX options at the same time are not compatible")
            }
            CmdError::ZIncrPair => {
                f.write_str("ERR INCR option supports a single increment-element pair")
            }
            CmdError::ZScoreNan => f.write_str("ERR resulting score is not a number (NaN)"),
            CmdError::ZMinMaxNotFloat => f.write_str("ERR min or max is not a float"),
            CmdError::ZMinMaxNotLex => f.write_str("ERR min or max not valid string range item"),
            CmdError::ZLimitNeedsBy => f.write_str(
                "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
            ),
            CmdError::ZWithscoresBylex => {
                f.write_str("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
            }
            CmdError::ZNeedsInputKey(cmd) => {
                write!(f, "ERR at least 1 input key is needed for '{cmd}' command")
            }
            CmdError::ZWeightNotFloat => f.write_str("ERR weight value is not a float"),
            CmdError::LimitNegative => f.write_str("ERR LIMIT can't be negative"),
            CmdError::NumkeysNotPositive => f.write_str("ERR numkeys should be greater than 0"),
            CmdError::NumkeysOverArgs => {
                f.write_str("ERR Number of keys can't be greater than number of args")
            }
            CmdError::CountNotPositive => f.write_str("ERR count should be greater than 0"),
            CmdError::TimeoutNotFloat => f.write_str("ERR timeout is not a float or out of range"),
            CmdError::IndexOutOfRange => f.write_str("ERR index out of range"),
            CmdError::ListRankZero => f.write_str(
                "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second \
                 ... or use negative to start from the end of the list",
            ),
            CmdError::ListCountNegative => f.write_str("ERR COUNT can't be negative"),
            CmdError::ListMaxlenNegative => f.write_str("ERR MAXLEN can't be negative"),
            CmdError::SortScoreNotDouble => {
                f.write_str("ERR One or more scores can't be converted into double")
            }
            CmdError::PubSubContext(cmd) => write!(
                f,
                "ERR Can't execute '{cmd}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT \
                 / RESET are allowed in this context"
            ),
            CmdError::DenyBlocking(cmd) => {
                write!(f, "ERR {cmd} isn't allowed for a DENY BLOCKING client")
            }
            CmdError::Other(s) => f.write_str(s),
            CmdError::UnblockReason => {
                f.write_str("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
            }
            CmdError::Tracking(e) => e.fmt(f),
            CmdError::Multi(e) => e.fmt(f),
            CmdError::Script(e) => e.fmt(f),
        }
    }
}

/// Errors of CLIENT TRACKING and CLIENT CACHING.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrackingError {
    /// `-ERR A client can only redirect to a single other client`
    RedirectTwice,
    /// `-ERR The client ID you want redirect to does not exist`
    NoRedirectTarget,
    /// `-ERR PREFIX option requires BCAST mode to be enabled`
    PrefixNeedsBcast,
    /// `-ERR You can't switch BCAST mode on/off before disabling tracking ...`
    BcastSwitch,
    /// `-ERR OPTIN and OPTOUT are not compatible with BCAST`
    BcastOptInOut,
    /// `-ERR You can't specify both OPTIN mode and OPTOUT mode`
    OptInAndOptOut,
    /// `-ERR You can't switch OPTIN/OPTOUT mode before disabling tracking ...`
    OptSwitch,
    /// `-ERR Prefix '<new>' overlaps with an existing prefix '<old>'. ...`
    PrefixOverlapsExisting { prefix: String, existing: String },
    /// `-ERR Prefix '<a>' overlaps with another provided prefix '<b>'. ...`
    PrefixOverlapsProvided { prefix: String, other: String },
    /// `-ERR CLIENT CACHING can be called only when the client is in tracking mode ...`
    CachingNotTracking,
    /// `-ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.`
    CachingYesNeedsOptIn,
    /// `-ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.`
    CachingNoNeedsOptOut,
}

impl fmt::Display for TrackingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const REENABLE: &str = "before disabling tracking for this client, and then \
                                re-enabling it with a different mode.";
        const NO_OVERLAP: &str = "Prefixes for a single client must not overlap.";
        match self {
            TrackingError::RedirectTwice => {
                f.write_str("ERR A client can only redirect to a single other client")
            }
            TrackingError::NoRedirectTarget => {
                f.write_str("ERR The client ID you want redirect to does not exist")
            }
            TrackingError::PrefixNeedsBcast => {
                f.write_str("ERR PREFIX option requires BCAST mode to be enabled")
            }
            TrackingError::BcastSwitch => {
                write!(f, "ERR You can't switch BCAST mode on/off {REENABLE}")
            }
            TrackingError::BcastOptInOut => {
                f.write_str("ERR OPTIN and OPTOUT are not compatible with BCAST")
            }
            TrackingError::OptInAndOptOut => {
                f.write_str("ERR You can't specify both OPTIN mode and OPTOUT mode")
            }
            TrackingError::OptSwitch => {
                write!(f, "ERR You can't switch OPTIN/OPTOUT mode {REENABLE}")
            }
            TrackingError::PrefixOverlapsExisting { prefix, existing } => write!(
                f,
                "ERR Prefix '{prefix}' overlaps with an existing prefix '{existing}'. {NO_OVERLAP}"
            ),
            TrackingError::PrefixOverlapsProvided { prefix, other } => write!(
                f,
                "ERR Prefix '{prefix}' overlaps with another provided prefix '{other}'. \
                 {NO_OVERLAP}"
            ),
            TrackingError::CachingNotTracking => f.write_str(
                "ERR CLIENT CACHING can be called only when the client is in tracking mode with \
                 OPTIN or OPTOUT mode enabled",
            ),
            TrackingError::CachingYesNeedsOptIn => f.write_str(
                "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.",
            ),
            TrackingError::CachingNoNeedsOptOut => f.write_str(
                "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.",
            ),
        }
    }
}

/// Which argument of SWAPDB an index error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbIndexArg {
    First,
    Second,
}

pub type CmdResult = Result<(), CmdError>;

impl From<crate::keyspace::value::WrongType> for CmdError {
    fn from(_: crate::keyspace::value::WrongType) -> CmdError {
        CmdError::WrongType
    }
}

/// Errors of transactions (MULTI, EXEC, DISCARD, WATCH) and of commands refused inside one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MultiError {
    /// `-ERR EXEC without MULTI`
    ExecWithoutMulti,
    /// `-ERR DISCARD without MULTI`
    DiscardWithoutMulti,
    /// `-ERR Command '<name>' not allowed inside a transaction` (commands flagged no-multi,
    /// MULTI and WATCH among them, as in Valkey 9)
    NotAllowed(&'static str),
    /// `-EXECABORT Transaction discarded because of previous errors.`
    ExecAbort,
    /// `-EXECABORT Transaction discarded because of: <error>` (EXEC itself refused: its
    /// arity, OOM...); the refusal's text, without an `ERR ` code.
    ExecAbortBecause(String),
    /// `-ERR MONITOR isn't allowed for DENY BLOCKING client` (MONITOR inside EXEC)
    MonitorInExec,
}

impl fmt::Display for MultiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MultiError::ExecWithoutMulti => f.write_str("ERR EXEC without MULTI"),
            MultiError::DiscardWithoutMulti => f.write_str("ERR DISCARD without MULTI"),
            MultiError::NotAllowed(name) => {
                write!(f, "ERR Command '{name}' not allowed inside a transaction")
            }
            MultiError::ExecAbort => {
                f.write_str("EXECABORT Transaction discarded because of previous errors.")
            }
            MultiError::ExecAbortBecause(why) => {
                write!(f, "EXECABORT Transaction discarded because of: {why}")
            }
            MultiError::MonitorInExec => {
                f.write_str("ERR MONITOR isn't allowed for DENY BLOCKING client")
            }
        }
    }
}

/// Errors of scripting: EVAL and FCALL refused before the script runs, and commands a
/// script calls refused before they run (those come back to the script as `{err = ...}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScriptError {
    /// `-NOSCRIPT No matching script.`
    NoScript,
    /// `-ERR Number of keys can't be negative`
    NumKeysNegative,
    /// `-ERR Number of keys can't be greater than number of args`
    NumKeysTooMany,
    /// `-ERR Can not execute a script with write flag using *_ro command.`
    WriteFlagWithRo,
    /// `-ERR Function not found`
    FunctionNotFound,
    /// `-ERR Unknown command called from script`
    UnknownCommand,
    /// `-ERR Wrong number of args calling command from script`
    WrongArity,
    /// `-ERR This Valkey command is not allowed from script`
    NotAllowed,
    /// `-ERR Write commands are not allowed from read-only scripts.`
    WriteFromReadOnly,
    /// `-NOTBUSY No scripts in execution right now.`
    NotBusy,
    /// A command refused while an EVAL script keeps the server busy.
    BusyEval,
    /// A command refused while a function keeps the server busy.
    BusyFunction,
    /// SCRIPT KILL or FUNCTION KILL of a script that has written.
    UnkillableWrote,
    /// SCRIPT KILL or FUNCTION KILL of a script the primary sent.
    UnkillableFromPrimary,
    /// `-ERR SCRIPT DEBUG must be called outside a pipeline`
    DebugInPipeline,
    /// `-ERR Use SCRIPT DEBUG YES/SYNC/NO`
    DebugMode,
    /// `-ERR Please use EVAL instead of EVALSHA for debugging`
    DebugEvalsha,
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ScriptError::NoScript => "NOSCRIPT No matching script.",
            ScriptError::NumKeysNegative => "ERR Number of keys can't be negative",
            ScriptError::NumKeysTooMany => {
                "ERR Number of keys can't be greater than number of args"
            }
            ScriptError::WriteFlagWithRo => {
                "ERR Can not execute a script with write flag using *_ro command."
            }
            ScriptError::FunctionNotFound => "ERR Function not found",
            ScriptError::UnknownCommand => "ERR Unknown command called from script",
            ScriptError::WrongArity => "ERR Wrong number of args calling command from script",
            ScriptError::NotAllowed => "ERR This Valkey command is not allowed from script",
            ScriptError::WriteFromReadOnly => {
                "ERR Write commands are not allowed from read-only scripts."
            }
            ScriptError::NotBusy => "NOTBUSY No scripts in execution right now.",
            ScriptError::BusyEval if redis_compat() => {
                "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN \
                 NOSAVE."
            }
            ScriptError::BusyEval => {
                "BUSY Valkey is busy running a script. You can only call SCRIPT KILL or SHUTDOWN \
                 NOSAVE."
            }
            ScriptError::BusyFunction if redis_compat() => {
                "BUSY Redis is busy running a script. You can only call FUNCTION KILL or \
                 SHUTDOWN NOSAVE."
            }
            ScriptError::BusyFunction => {
                "BUSY Valkey is busy running a script. You can only call FUNCTION KILL or \
                 SHUTDOWN NOSAVE."
            }
            ScriptError::UnkillableWrote => {
                "UNKILLABLE Sorry the script already executed write commands against the \
                 dataset. You can either wait the script termination or kill the server in a \
                 hard way using the SHUTDOWN NOSAVE command."
            }
            ScriptError::UnkillableFromPrimary => {
                "UNKILLABLE The busy script was sent by a master instance in the context of \
                 replication and cannot be killed."
            }
            ScriptError::DebugInPipeline => "ERR SCRIPT DEBUG must be called outside a pipeline",
            ScriptError::DebugMode => "ERR Use SCRIPT DEBUG YES/SYNC/NO",
            ScriptError::DebugEvalsha => "ERR Please use EVAL instead of EVALSHA for debugging",
        })
    }
}
