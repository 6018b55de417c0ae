//! TLS directives. ferrokey has no TLS yet: `tls-port`, `tls-replication` and `tls-cluster`
//! accept only their defaults (off); the rest are validated and stored.

use super::*;
#[allow(unused_imports)]
use crate::config::kind::any_string;
#[allow(unused_imports)]
use crate::config::special;
#[allow(unused_imports)]
use crate::config::values::*;

/// The tls settings added for Valkey 9.1; the older ones are fields of `Config`.
#[derive(Debug, Clone, PartialEq)]
pub struct Tls {
    pub tls_port: u16,
    pub tls_cert_file: String,
    pub tls_key_file: String,
    pub tls_key_file_pass: String,
    pub tls_client_cert_file: String,
    pub tls_client_key_file: String,
    pub tls_client_key_file_pass: String,
    pub tls_dh_params_file: String,
    pub tls_ca_cert_file: String,
    pub tls_ca_cert_dir: String,
    pub tls_protocols: String,
    pub tls_ciphers: String,
    pub tls_ciphersuites: String,
    pub tls_auth_clients: TlsAuthClients,
    pub tls_auth_clients_user: TlsAuthClientsUser,
    pub tls_replication: bool,
    pub tls_cluster: bool,
    pub tls_prefer_server_ciphers: bool,
    pub tls_session_caching: bool,
    pub tls_session_cache_size: u32,
    pub tls_session_cache_timeout_secs: u32,
    pub tls_auto_reload_interval_secs: u32,
}

impl Default for Tls {
    fn default() -> Self {
        Tls {
            tls_port: 0,
            tls_cert_file: String::new(),
            tls_key_file: String::new(),
            tls_key_file_pass: String::new(),
            tls_client_cert_file: String::new(),
            tls_client_key_file: String::new(),
            tls_client_key_file_pass: String::new(),
            tls_dh_params_file: String::new(),
            tls_ca_cert_file: String::new(),
            tls_ca_cert_dir: String::new(),
            tls_protocols: String::new(),
            tls_ciphers: String::new(),
            tls_ciphersuites: String::new(),
            tls_auth_clients: TlsAuthClients::Yes,
            tls_auth_clients_user: TlsAuthClientsUser::Off,
            tls_replication: false,
            tls_cluster: false,
            tls_prefer_server_ciphers: false,
            tls_session_caching: true,
            tls_session_cache_size: 20480,
            tls_session_cache_timeout_secs: 300,
            tls_auto_reload_interval_secs: 0,
        }
    }
}

pub(super) static ROWS: &[Directive] = &[
    // Added for Valkey 9.1.
    int(
        "tls-port",
        Mutable,
        0,
        65535,
        "0",
        |c| c.tls.tls_port.into(),
        |c, v| c.tls.tls_port = v as u16,
    )
    .support(Gate(Feature::Tls)),
    string(
        "tls-cert-file",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.tls.tls_cert_file,
        |c, v| c.tls.tls_cert_file = v,
    )
    .support(Tunes(Feature::Tls)),
    string(
        "tls-key-file",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.tls.tls_key_file,
        |c, v| c.tls.tls_key_file = v,
    )
    .support(Tunes(Feature::Tls)),
    string(
        "tls-key-file-pass",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.tls.tls_key_file_pass,
        |c, v| c.tls.tls_key_file_pass = v,
    )
    .support(Tunes(Feature::Tls)),
    string(
        "tls-client-cert-file",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.tls.tls_client_cert_file,
        |c, v| c.tls.tls_client_cert_file = v,
    )
    .support(Tunes(Feature::Tls)),
    string(
        "tls-client-key-file",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.tls.tls_client_key_file,
        |c, v| c.tls.tls_client_key_file = v,
    )
    .support(Tunes(Feature::Tls)),
    string(
        "tls-client-key-file-pass",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.tls.tls_client_key_file_pass,
        |c, v| c.tls.tls_client_key_file_pass = v,
    )
    .support(Tunes(Feature::Tls)),
    string(
        "tls-dh-params-file",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.tls.tls_dh_params_file,
        |c, v| c.tls.tls_dh_params_file = v,
    )
    .support(Tunes(Feature::Tls)),
    string(
        "tls-ca-cert-file",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.tls.tls_ca_cert_file,
        |c, v| c.tls.tls_ca_cert_file = v,
    )
    .support(Tunes(Feature::Tls)),
    string(
        "tls-ca-cert-dir",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.tls.tls_ca_cert_dir,
        |c, v| c.tls.tls_ca_cert_dir = v,
    )
    .support(Tunes(Feature::Tls)),
    string(
        "tls-protocols",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.tls.tls_protocols,
        |c, v| c.tls.tls_protocols = v,
    )
    .support(Tunes(Feature::Tls)),
    string(
        "tls-ciphers",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.tls.tls_ciphers,
        |c, v| c.tls.tls_ciphers = v,
    )
    .support(Tunes(Feature::Tls)),
    string(
        "tls-ciphersuites",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.tls.tls_ciphersuites,
        |c, v| c.tls.tls_ciphersuites = v,
    )
    .support(Tunes(Feature::Tls)),
    choice(
        "tls-auth-clients",
        Mutable,
        TlsAuthClients::NAMES,
        "yes",
        |c| c.tls.tls_auth_clients as usize,
        |c, i| c.tls.tls_auth_clients = TlsAuthClients::ALL[i],
    )
    .support(Tunes(Feature::Tls)),
    choice(
        "tls-auth-clients-user",
        Mutable,
        TlsAuthClientsUser::NAMES,
        "off",
        |c| c.tls.tls_auth_clients_user as usize,
        |c, i| c.tls.tls_auth_clients_user = TlsAuthClientsUser::ALL[i],
    )
    .support(Tunes(Feature::Tls)),
    boolean(
        "tls-replication",
        Mutable,
        "no",
        |c| c.tls.tls_replication,
        |c, v| c.tls.tls_replication = v,
    )
    .support(Gate(Feature::Tls)),
    boolean("tls-cluster", Mutable, "no", |c| c.tls.tls_cluster, |c, v| c.tls.tls_cluster = v)
        .support(Gate(Feature::Tls)),
    boolean(
        "tls-prefer-server-ciphers",
        Mutable,
        "no",
        |c| c.tls.tls_prefer_server_ciphers,
        |c, v| c.tls.tls_prefer_server_ciphers = v,
    )
    .support(Tunes(Feature::Tls)),
    boolean(
        "tls-session-caching",
        Mutable,
        "yes",
        |c| c.tls.tls_session_caching,
        |c, v| c.tls.tls_session_caching = v,
    )
    .support(Tunes(Feature::Tls)),
    int(
        "tls-session-cache-size",
        Mutable,
        0,
        INT_MAX,
        "20480",
        |c| c.tls.tls_session_cache_size.into(),
        |c, v| c.tls.tls_session_cache_size = v as u32,
    )
    .support(Tunes(Feature::Tls)),
    int(
        "tls-session-cache-timeout",
        Mutable,
        0,
        INT_MAX,
        "300",
        |c| c.tls.tls_session_cache_timeout_secs.into(),
        |c, v| c.tls.tls_session_cache_timeout_secs = v as u32,
    )
    .support(Tunes(Feature::Tls)),
    int(
        "tls-auto-reload-interval",
        Mutable,
        0,
        INT_MAX,
        "0",
        |c| c.tls.tls_auto_reload_interval_secs.into(),
        |c, v| c.tls.tls_auto_reload_interval_secs = v as u32,
    )
    .support(Tunes(Feature::Tls)),
];
