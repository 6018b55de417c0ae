//! The typed values that configuration fields hold besides plain numbers, strings and bools:
//! the enum-valued directives, output-buffer limits, `maxmemory-clients` and the keyspace
//! notification classes. Each enum lists its names in the order Valkey's `configEnum`
//! tables do, because that order shows up in error texts.

/// Declares a config enum whose variants map 1:1, in order, to the names Valkey accepts.
macro_rules! config_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every variant, in the order of [`Self::NAMES`].
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];
            /// The names accepted in the config file and by CONFIG SET, case-insensitive.
            pub const NAMES: &'static [&'static str] = &[$($text,)+];

            /// The name CONFIG GET shows.
            pub fn name(self) -> &'static str {
                Self::NAMES[self as usize]
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

config_enum! {
    /// `maxmemory-policy`: what happens when `maxmemory` is reached.
    MaxmemoryPolicy {
        VolatileLru = "volatile-lru",
        VolatileLfu = "volatile-lfu",
        VolatileRandom = "volatile-random",
        VolatileTtl = "volatile-ttl",
        AllkeysLru = "allkeys-lru",
        AllkeysLfu = "allkeys-lfu",
        AllkeysRandom = "allkeys-random",
        Noeviction = "noeviction",
    }
}

config_enum! {
    /// `appendfsync`: when the AOF is fsynced.
    Appendfsync {
        Everysec = "everysec",
        Always = "always",
        No = "no",
    }
}

config_enum! {
    /// `loglevel`, from the most to the least verbose.
    LogLevel {
        Debug = "debug",
        Verbose = "verbose",
        Notice = "notice",
        Warning = "warning",
        Nothing = "nothing",
    }
}

config_enum! {
    /// `enable-debug-command`: who may run DEBUG.
    EnableDebugCommand {
        No = "no",
        Yes = "yes",
        /// Only connections from the loopback interface or a unix socket.
        Local = "local",
    }
}

config_enum! {
    /// `enable-protected-configs`: who may CONFIG SET the protected directives (`dir`,
    /// `dbfilename`), which could otherwise make the server write files anywhere.
    EnableProtectedConfigs {
        No = "no",
        Yes = "yes",
        /// Only connections from the loopback interface or a unix socket.
        Local = "local",
    }
}

config_enum! {
    /// `supervised`: how the server talks to a supervisor (upstart/systemd).
    Supervised {
        Upstart = "upstart",
        Systemd = "systemd",
        Auto = "auto",
        No = "no",
    }
}

config_enum! {
    /// `propagation-error-behavior`: what happens when a command replayed from the AOF (or, once
    /// replication lands, received from a primary) replies with an error.
    PropagationErrorBehavior {
        /// Log the error and go on.
        Ignore = "ignore",
        /// Stop: the AOF replay aborts start-up.
        Panic = "panic",
        /// Stop only on a replica; an AOF replay logs and goes on.
        PanicOnReplicas = "panic-on-replicas",
    }
}

config_enum! {
    /// `enable-module-command`: who may run MODULE (ferrokey has no MODULE command).
    EnableModuleCommand {
        No = "no",
        Yes = "yes",
        Local = "local",
    }
}

config_enum! {
    /// `syslog-facility`.
    SyslogFacility {
        User = "user",
        Local0 = "local0",
        Local1 = "local1",
        Local2 = "local2",
        Local3 = "local3",
        Local4 = "local4",
        Local5 = "local5",
        Local6 = "local6",
        Local7 = "local7",
    }
}

config_enum! {
    /// `log-format`: how a log line is laid out.
    LogFormat {
        Legacy = "legacy",
        Logfmt = "logfmt",
        Json = "json",
    }
}

config_enum! {
    /// `log-timestamp-format`: how a log line's time is written.
    LogTimestampFormat {
        Legacy = "legacy",
        Iso8601 = "iso8601",
        Milliseconds = "milliseconds",
    }
}

config_enum! {
    /// `oom-score-adj`: whether and how `oom-score-adj-values` are written to the kernel.
    OomScoreAdj {
        No = "no",
        Yes = "yes",
        Relative = "relative",
        Absolute = "absolute",
    }
}

config_enum! {
    /// `rdb-version-check`: whether an RDB file of a later version than Valkey 9's, or of
    /// another project's line (12 to 79), is refused (strict) or read as far as its types
    /// and opcodes are known (relaxed).
    RdbVersionCheck {
        Strict = "strict",
        Relaxed = "relaxed",
    }
}

config_enum! {
    /// `repl-diskless-load`: how a replica loads the RDB file its primary sends.
    ReplDisklessLoad {
        Disabled = "disabled",
        OnEmptyDb = "on-empty-db",
        Swapdb = "swapdb",
        FlushBeforeLoad = "flush-before-load",
    }
}

config_enum! {
    /// `acl-pubsub-default`: the channel permissions of a new ACL user.
    AclPubsubDefault {
        Allchannels = "allchannels",
        Resetchannels = "resetchannels",
    }
}

config_enum! {
    /// `tls-auth-clients`: whether TLS clients must present a certificate.
    TlsAuthClients {
        No = "no",
        Yes = "yes",
        Optional = "optional",
    }
}

config_enum! {
    /// `tls-auth-clients-user`: which certificate field names the ACL user of a TLS client.
    TlsAuthClientsUser {
        Cn = "CN",
        Uri = "URI",
        Off = "off",
    }
}

config_enum! {
    /// `cluster-preferred-endpoint-type`: what CLUSTER SLOTS and redirections name a node by.
    ClusterPreferredEndpointType {
        Ip = "ip",
        Hostname = "hostname",
        UnknownEndpoint = "unknown-endpoint",
    }
}

config_enum! {
    /// `cluster-config-save-behavior`: how the cluster config file is saved.
    ClusterConfigSaveBehavior {
        Sync = "sync",
        BestEffort = "best-effort",
    }
}

/// `shutdown-on-sigint` / `shutdown-on-sigterm`: the SHUTDOWN flags a signal implies, as a
/// bit set over [`ShutdownFlags::NAMES`]; `default` (no bit) is a plain SHUTDOWN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShutdownFlags(pub u8);

impl ShutdownFlags {
    pub const DEFAULT: ShutdownFlags = ShutdownFlags(0);
    /// Valkey's names, in the order CONFIG GET prints them; `default` is bit 0 and sets none.
    pub const NAMES: &'static [&'static str] =
        &["default", "save", "nosave", "now", "force", "safe", "failover"];

    /// Parses one or more names; `None` on an unknown one.
    pub fn parse<S: AsRef<str>>(names: &[S]) -> Option<ShutdownFlags> {
        let mut bits = 0u8;
        for name in names {
            let index = Self::NAMES.iter().position(|n| n.eq_ignore_ascii_case(name.as_ref()))?;
            if index > 0 {
                bits |= 1 << (index - 1);
            }
        }
        Some(ShutdownFlags(bits))
    }

    /// The names of the flags set, space-separated; `default` when none is.
    pub fn to_names(self) -> String {
        if self.0 == 0 {
            return "default".to_string();
        }
        let set = Self::NAMES[1..].iter().enumerate().filter(|(i, _)| self.0 & (1 << i) != 0);
        set.map(|(_, n)| *n).collect::<Vec<_>>().join(" ")
    }
}

/// One class of `client-output-buffer-limit`. A client whose pending output passes
/// `hard_bytes`, or stays above `soft_bytes` for `soft_secs`, is disconnected; 0 disables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ObufLimit {
    pub hard_bytes: u64,
    pub soft_bytes: u64,
    pub soft_secs: u64,
}

/// Index into `Config::client_output_buffer_limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObufClass {
    Normal = 0,
    Replica = 1,
    Pubsub = 2,
}

impl ObufClass {
    pub const ALL: [ObufClass; 3] = [ObufClass::Normal, ObufClass::Replica, ObufClass::Pubsub];

    /// The class name CONFIG GET prints (Valkey still prints `slave`).
    pub fn name(self) -> &'static str {
        match self {
            ObufClass::Normal => "normal",
            ObufClass::Replica => "slave",
            ObufClass::Pubsub => "pubsub",
        }
    }

    /// Parses a class name as `getClientTypeByName`; `master`/`primary` have no limit class.
    pub fn from_name(name: &str) -> Option<ObufClass> {
        match name.to_ascii_lowercase().as_str() {
            "normal" => Some(ObufClass::Normal),
            "slave" | "replica" => Some(ObufClass::Replica),
            "pubsub" => Some(ObufClass::Pubsub),
            _ => None,
        }
    }
}

/// `maxmemory-clients`: an absolute budget or a percentage of `maxmemory`. `Bytes(0)` = off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxmemoryClients {
    Bytes(u64),
    Percent(u32),
}

impl Default for MaxmemoryClients {
    fn default() -> Self {
        MaxmemoryClients::Bytes(0)
    }
}

/// `notify-keyspace-events` as a set of class flags (Valkey's `NOTIFY_*` bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KeyspaceEvents(pub u32);

impl KeyspaceEvents {
    pub const KEYSPACE: u32 = 1 << 0; // K
    pub const KEYEVENT: u32 = 1 << 1; // E
    pub const GENERIC: u32 = 1 << 2; // g
    pub const STRING: u32 = 1 << 3; // $
    pub const LIST: u32 = 1 << 4; // l
    pub const SET: u32 = 1 << 5; // s
    pub const HASH: u32 = 1 << 6; // h
    pub const ZSET: u32 = 1 << 7; // z
    pub const EXPIRED: u32 = 1 << 8; // x
    pub const EVICTED: u32 = 1 << 9; // e
    pub const STREAM: u32 = 1 << 10; // t
    pub const KEY_MISS: u32 = 1 << 11; // m (not part of A)
    pub const MODULE: u32 = 1 << 12; // d
    pub const NEW: u32 = 1 << 13; // n (not part of A)
    /// `A`: every type and event class except key-miss and new-key.
    pub const ALL: u32 = Self::GENERIC
        | Self::STRING
        | Self::LIST
        | Self::SET
        | Self::HASH
        | Self::ZSET
        | Self::EXPIRED
        | Self::EVICTED
        | Self::STREAM
        | Self::MODULE;

    /// The classes printed after `A` or after the individual type letters.
    const SUFFIX: [(u32, char); 3] =
        [(Self::KEYSPACE, 'K'), (Self::KEYEVENT, 'E'), (Self::KEY_MISS, 'm')];
    /// The classes that `A` stands for, in the order Valkey prints them.
    const TYPES: [(u32, char); 11] = [
        (Self::GENERIC, 'g'),
        (Self::STRING, '$'),
        (Self::LIST, 'l'),
        (Self::SET, 's'),
        (Self::HASH, 'h'),
        (Self::ZSET, 'z'),
        (Self::EXPIRED, 'x'),
        (Self::EVICTED, 'e'),
        (Self::STREAM, 't'),
        (Self::MODULE, 'd'),
        (Self::NEW, 'n'),
    ];

    pub fn contains(self, flags: u32) -> bool {
        self.0 & flags == flags
    }

    /// Parses class letters as `keyspaceEventsStringToFlags`; `None` on an unknown letter.
    pub fn parse(classes: &str) -> Option<KeyspaceEvents> {
        let mut flags = 0;
        for c in classes.chars() {
            flags |= match c {
                'A' => Self::ALL,
                'm' => Self::KEY_MISS,
                'K' => Self::KEYSPACE,
                'E' => Self::KEYEVENT,
                _ => Self::TYPES.iter().find(|(_, l)| *l == c)?.0,
            };
        }
        Some(KeyspaceEvents(flags))
    }

    /// Formats the flags as `keyspaceEventsFlagsToString` (what CONFIG GET prints).
    pub fn to_classes(self) -> String {
        let mut out = String::new();
        if self.contains(Self::ALL) {
            out.push('A');
            if self.contains(Self::NEW) {
                out.push('n');
            }
        } else {
            out.extend(Self::TYPES.iter().filter(|(f, _)| self.contains(*f)).map(|(_, c)| c));
        }
        out.extend(Self::SUFFIX.iter().filter(|(f, _)| self.contains(*f)).map(|(_, c)| c));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enum_names_round_trip() {
        for p in MaxmemoryPolicy::ALL {
            assert_eq!(MaxmemoryPolicy::ALL[*p as usize], *p);
        }
        assert_eq!(MaxmemoryPolicy::AllkeysLfu.name(), "allkeys-lfu");
        assert_eq!(EnableDebugCommand::Local.to_string(), "local");
        assert_eq!(LogLevel::NAMES.len(), LogLevel::ALL.len());
    }

    #[test]
    fn obuf_class_names() {
        assert_eq!(ObufClass::from_name("REPLICA"), Some(ObufClass::Replica));
        assert_eq!(ObufClass::from_name("slave"), Some(ObufClass::Replica));
        assert_eq!(ObufClass::from_name("master"), None);
        assert_eq!(ObufClass::from_name("primary"), None);
        assert_eq!(ObufClass::Replica.name(), "slave");
    }

    #[test]
    fn keyspace_events() {
        assert_eq!(KeyspaceEvents::parse(""), Some(KeyspaceEvents(0)));
        assert_eq!(KeyspaceEvents::parse("KEA").unwrap().to_classes(), "AKE");
        assert_eq!(KeyspaceEvents::parse("Ex").unwrap().to_classes(), "xE");
        assert_eq!(KeyspaceEvents::parse("Kg$lshzxetdmn").unwrap().to_classes(), "AnKm");
        assert_eq!(KeyspaceEvents::parse("nK").unwrap().to_classes(), "nK");
        assert!(KeyspaceEvents::parse("KEA").unwrap().contains(KeyspaceEvents::EXPIRED));
        assert_eq!(KeyspaceEvents::parse("Kq"), None);
        assert_eq!(KeyspaceEvents::parse("k"), None);
    }
}
