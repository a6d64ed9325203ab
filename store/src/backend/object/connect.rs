//! From a URL (`s3://bucket/prefix`, `gs://…`, `az://…`) and an [`ObjectStoreConfig`] to
//! an `object_store` client and the store's prefix. Each provider's builder is given the
//! settings its `from_env` would have read, from the configuration instead.

use super::config::ObjectStoreConfig;
#[cfg(feature = "azure")]
use super::config::AZURE_IDENTITY_ENDPOINT;
#[cfg(feature = "gcp")]
use super::config::GCP_SERVICE_ACCOUNT;
use crate::{StoreError, StoreResult};
use object_store::ObjectStore;
use std::sync::Arc;

/// The URL schemes [`crate::ObjectChunkStore::open`] understands (those compiled in).
pub const OBJECT_URL_SCHEMES: &[&str] = &["s3", "gs", "az"];

/// Whether `text` names an object-store location (`s3://…`, `gs://…`, `az://…`) rather
/// than a folder.
pub fn is_object_store_url(text: &str) -> bool {
    text.split_once("://")
        .is_some_and(|(scheme, _)| OBJECT_URL_SCHEMES.contains(&scheme))
}

/// The object store and prefix `url` names, reached as `config` says.
pub(crate) fn connect(
    url: &str,
    config: &ObjectStoreConfig,
) -> StoreResult<(Arc<dyn ObjectStore>, String)> {
    let bad = |why: &str| StoreError::Backend(format!("cannot use {url} as a store: {why}"));
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| bad("expected s3://bucket/prefix"))?;
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(bad("it names no bucket"));
    }
    let built = match scheme {
        "s3" => s3(bucket, config),
        "gs" => gcs(bucket, config),
        "az" => azure(bucket, config),
        _ => return Err(bad("unknown scheme (use s3://, gs:// or az://)")),
    };
    let objects = built.map_err(|why| bad(&why))?;
    Ok((objects, prefix.to_string()))
}

/// An S3 (or S3-compatible) client for `bucket`, from the `AWS_*` settings.
#[cfg(feature = "aws")]
fn s3(bucket: &str, config: &ObjectStoreConfig) -> Result<Arc<dyn ObjectStore>, String> {
    use object_store::aws::AmazonS3Builder;
    let builder = keyed(config, "AWS_").fold(AmazonS3Builder::new(), |builder, (key, value)| {
        builder.with_config(key, value)
    });
    boxed(builder.with_bucket_name(bucket).build())
}

/// A Google Cloud Storage client for `bucket`, from `SERVICE_ACCOUNT` and the `GOOGLE_*`
/// settings.
#[cfg(feature = "gcp")]
fn gcs(bucket: &str, config: &ObjectStoreConfig) -> Result<Arc<dyn ObjectStore>, String> {
    use object_store::gcp::GoogleCloudStorageBuilder;
    let mut builder = GoogleCloudStorageBuilder::new();
    if let Some(path) = config.get(GCP_SERVICE_ACCOUNT) {
        builder = builder.with_service_account_path(path);
    }
    let builder = keyed(config, "GOOGLE_").fold(builder, |builder, (key, value)| {
        builder.with_config(key, value)
    });
    boxed(builder.with_bucket_name(bucket).build())
}

/// An Azure Blob Storage client for container `bucket`, from the `AZURE_*` settings and
/// `IDENTITY_ENDPOINT`.
#[cfg(feature = "azure")]
fn azure(bucket: &str, config: &ObjectStoreConfig) -> Result<Arc<dyn ObjectStore>, String> {
    use object_store::azure::MicrosoftAzureBuilder;
    let mut builder = keyed(config, "AZURE_")
        .fold(MicrosoftAzureBuilder::new(), |builder, (key, value)| {
            builder.with_config(key, value)
        });
    if let Some(endpoint) = config.get(AZURE_IDENTITY_ENDPOINT) {
        builder = builder.with_msi_endpoint(endpoint);
    }
    boxed(builder.with_container_name(bucket).build())
}

/// The settings of `config` under `prefix` whose lowercased names are keys of a
/// provider's builder, in the order given: what that provider's `from_env` would take.
#[cfg(any(feature = "aws", feature = "gcp", feature = "azure"))]
fn keyed<'c, K: std::str::FromStr>(
    config: &'c ObjectStoreConfig,
    prefix: &'c str,
) -> impl Iterator<Item = (K, &'c str)> + 'c {
    config
        .with_prefix(prefix)
        .filter_map(|(name, value)| Some((name.to_ascii_lowercase().parse().ok()?, value)))
}

/// A built client, shared; or why it could not be built.
#[cfg(any(feature = "aws", feature = "gcp", feature = "azure"))]
fn boxed<S: ObjectStore>(built: object_store::Result<S>) -> Result<Arc<dyn ObjectStore>, String> {
    built
        .map(|store| Arc::new(store) as Arc<dyn ObjectStore>)
        .map_err(|error| error.to_string())
}

#[cfg(not(feature = "aws"))]
fn s3(_bucket: &str, _config: &ObjectStoreConfig) -> Result<Arc<dyn ObjectStore>, String> {
    Err(not_built_in("aws"))
}

#[cfg(not(feature = "gcp"))]
fn gcs(_bucket: &str, _config: &ObjectStoreConfig) -> Result<Arc<dyn ObjectStore>, String> {
    Err(not_built_in("gcp"))
}

#[cfg(not(feature = "azure"))]
fn azure(_bucket: &str, _config: &ObjectStoreConfig) -> Result<Arc<dyn ObjectStore>, String> {
    Err(not_built_in("azure"))
}

/// Why a URL scheme cannot be used: its cargo feature was off.
#[cfg(not(all(feature = "aws", feature = "gcp", feature = "azure")))]
fn not_built_in(feature: &str) -> String {
    format!("this rnt was built without the `{feature}` feature of rnt-store")
}
