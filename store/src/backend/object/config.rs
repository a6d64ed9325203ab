//! How to reach an object store ([`ObjectStoreConfig`]) and how to open a store on one
//! ([`ObjectOptions`]): passed in by the caller, never read from the environment here.

use crate::backend::packs::Compression;
use std::ffi::OsStr;
use std::fmt;

/// The prefixes of the settings each provider takes, with the names its builder also
/// accepts whole (`object_store`'s `from_env` reads the same ones).
const SETTING_PREFIXES: [&str; 3] = ["AWS_", "GOOGLE_", "AZURE_"];

/// Settings named whole rather than by a prefix: Google's service account file and
/// Azure's managed-identity endpoint.
const SETTINGS_NAMED: [&str; 2] = [GCP_SERVICE_ACCOUNT, AZURE_IDENTITY_ENDPOINT];

/// Google Cloud's service-account file setting.
pub(crate) const GCP_SERVICE_ACCOUNT: &str = "SERVICE_ACCOUNT";

/// Azure's managed-identity endpoint setting.
pub(crate) const AZURE_IDENTITY_ENDPOINT: &str = "IDENTITY_ENDPOINT";

/// How to reach an object store: the provider's settings, named as its standard
/// environment variables are — `AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY`, `AWS_ALLOW_HTTP=true` for a plain-HTTP endpoint, and any other
/// `AWS_*` setting of `object_store` (`AWS_SESSION_TOKEN`, …); `GOOGLE_*` and
/// `SERVICE_ACCOUNT` for `gs://`, `AZURE_*` and `IDENTITY_ENDPOINT` for `az://`.
///
/// The store reads no environment variable itself: its caller passes what it read (the
/// CLI passes its environment, [`ObjectStoreConfig::from_variables`]).
///
/// ```
/// # use rnt_store::ObjectStoreConfig;
/// let config = ObjectStoreConfig::default()
///     .with("AWS_ENDPOINT_URL", "http://127.0.0.1:8333")
///     .with("AWS_ALLOW_HTTP", "true");
/// assert_eq!(config.get("AWS_ALLOW_HTTP"), Some("true"));
/// // Values may be secrets: they are never printed.
/// assert!(!format!("{config:?}").contains("8333"));
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ObjectStoreConfig {
    /// (name, value), in the order given: a later setting of the same key wins.
    settings: Vec<(String, String)>,
}

impl ObjectStoreConfig {
    /// This configuration with setting `name` (a provider variable's name) set to `value`.
    pub fn with(mut self, name: impl Into<String>, value: impl Into<String>) -> ObjectStoreConfig {
        self.settings.push((name.into(), value.into()));
        self
    }

    /// The provider settings among `variables` (e.g. a process's environment): those
    /// whose names start with `AWS_`, `GOOGLE_` or `AZURE_`, or are `SERVICE_ACCOUNT` or
    /// `IDENTITY_ENDPOINT`, and whose names and values are UTF-8.
    pub fn from_variables<I, K, V>(variables: I) -> ObjectStoreConfig
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        let settings = variables
            .into_iter()
            .filter_map(|(name, value)| {
                let name = name.as_ref().to_str()?;
                let value = value.as_ref().to_str()?;
                is_setting(name).then(|| (name.to_string(), value.to_string()))
            })
            .collect();
        ObjectStoreConfig { settings }
    }

    /// The last value given for setting `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.settings
            .iter()
            .rev()
            .find(|(setting, _)| setting == name)
            .map(|(_, value)| value.as_str())
    }

    /// The settings whose names start with `prefix`, in the order given.
    pub(crate) fn with_prefix<'c>(
        &'c self,
        prefix: &'c str,
    ) -> impl Iterator<Item = (&'c str, &'c str)> + 'c {
        self.settings
            .iter()
            .filter(move |(name, _)| name.starts_with(prefix))
            .map(|(name, value)| (name.as_str(), value.as_str()))
    }
}

/// Whether `name` is a provider setting [`ObjectStoreConfig`] keeps.
fn is_setting(name: &str) -> bool {
    SETTING_PREFIXES
        .iter()
        .any(|prefix| name.starts_with(prefix))
        || SETTINGS_NAMED.contains(&name)
}

impl fmt::Debug for ObjectStoreConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Names only: values include secret keys.
        f.debug_struct("ObjectStoreConfig")
            .field(
                "settings",
                &self
                    .settings
                    .iter()
                    .map(|(name, _)| name)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Settings for [`crate::ObjectChunkStore::open`].
///
/// ```
/// # use rnt_store::{Codec, ObjectOptions, ObjectStoreConfig};
/// let options = ObjectOptions::default()
///     .with_config(ObjectStoreConfig::default().with("AWS_REGION", "us-east-1"))
///     .with_compression(Codec::Lz4.into());
/// assert_eq!(options.config.get("AWS_REGION"), Some("us-east-1"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ObjectOptions {
    /// How to reach the object store.
    pub config: ObjectStoreConfig,
    /// How new chunks are compressed (default: [`Compression::default`]).
    pub compression: Compression,
}

impl ObjectOptions {
    /// These options reaching the object store as `config` says.
    pub fn with_config(mut self, config: ObjectStoreConfig) -> ObjectOptions {
        self.config = config;
        self
    }

    /// These options compressing new chunks as `compression` says.
    pub fn with_compression(mut self, compression: Compression) -> ObjectOptions {
        self.compression = compression;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_provider_settings_are_kept_and_the_last_one_wins() {
        let config = ObjectStoreConfig::from_variables([
            ("PATH", "/bin"),
            ("AWS_REGION", "eu-west-1"),
            ("GOOGLE_BUCKET", "b"),
            ("SERVICE_ACCOUNT", "key.json"),
            ("HOME", "/root"),
            ("AWS_REGION", "us-east-1"),
        ]);
        assert_eq!(config.get("AWS_REGION"), Some("us-east-1"));
        assert_eq!(config.get("PATH"), None);
        assert_eq!(config.get("HOME"), None);
        assert_eq!(config.get("SERVICE_ACCOUNT"), Some("key.json"));
        let aws: Vec<_> = config.with_prefix("AWS_").collect();
        assert_eq!(
            aws,
            [("AWS_REGION", "eu-west-1"), ("AWS_REGION", "us-east-1")]
        );
    }
}
