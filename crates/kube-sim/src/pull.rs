//! Why an image pull fails, in the words the container runtime hands the kubelet: the
//! kubelet shows them as the waiting message of `ErrImagePull`, and in its `Failed` Event
//! `Failed to pull image "IMAGE": <this>` (pkg/kubelet/images/image_manager.go). A pull in
//! `ImagePullBackOff` keeps only `Back-off pulling image "IMAGE"`: the Event is all that says why.

/// The node's container runtime: its errors are worded differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runtime {
    /// containerd's CRI plugin (internal/cri/server/images/image_pull.go, remotes/docker).
    Containerd,
    /// CRI-O, whose pulls go through containers/image (docker/docker_image_src.go).
    CriO,
}

/// What the registry (or the way to it) said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PullError {
    NotFound,
    Unauthorized,
    RateLimited,
    NoSuchHost,
    UnknownAuthority,
}

/// The error the kubelet gets from the runtime for pulling `image` (as written in the spec).
pub(crate) fn runtime_error(runtime: Runtime, error: PullError, image: &str) -> String {
    let r = Reference::parse(image);
    let full = r.full();
    match runtime {
        Runtime::Containerd => {
            let code = if error == PullError::NotFound {
                "NotFound"
            } else {
                "Unknown"
            };
            let head = format!(
                "rpc error: code = {code} desc = failed to pull and unpack image \"{full}\""
            );
            let request = format!(
                "failed to do request: Head \"https://{}/v2/{}/manifests/{}\"",
                r.endpoint(),
                r.repo,
                r.tag
            );
            let cause = match error {
                PullError::NotFound => {
                    format!("failed to resolve reference \"{full}\": {full}: not found")
                }
                PullError::Unauthorized => format!(
                    "failed to resolve reference \"{full}\": failed to authorize: failed to fetch oauth token: \
                     unexpected status: 401 Unauthorized"
                ),
                // The manifest HEAD is allowed; the GET that counts against the limit is not.
                PullError::RateLimited => format!(
                    "failed to copy: httpReadSeeker: failed open: unexpected status code \
                     https://{}/v2/{}/manifests/sha256:{}: 429 Too Many Requests - Server message: \
                     toomanyrequests: You have reached your pull rate limit. You may increase the limit \
                     by authenticating and upgrading: https://www.docker.com/increase-rate-limit",
                    r.endpoint(),
                    r.repo,
                    digest(image)
                ),
                PullError::NoSuchHost => format!(
                    "failed to resolve reference \"{full}\": {request}: dial tcp: lookup {} on \
                     127.0.0.53:53: no such host",
                    r.host
                ),
                PullError::UnknownAuthority => format!(
                    "failed to resolve reference \"{full}\": {request}: tls: failed to verify \
                     certificate: x509: certificate signed by unknown authority"
                ),
            };
            format!("{head}: {cause}")
        }
        Runtime::CriO => {
            let (host, name) = (r.host, format!("{}/{}", r.host, r.repo));
            let cause = match error {
                PullError::NotFound => {
                    format!("reading manifest {} in {name}: manifest unknown", r.tag)
                }
                PullError::Unauthorized => format!(
                    "reading manifest {} in {name}: unauthorized: authentication required",
                    r.tag
                ),
                PullError::RateLimited => format!(
                    "reading manifest {} in {name}: toomanyrequests: You have reached your pull rate \
                     limit. You may increase the limit by authenticating and upgrading: \
                     https://www.docker.com/increase-rate-limit",
                    r.tag
                ),
                PullError::NoSuchHost => format!(
                    "pinging container registry {host}: Get \"https://{host}/v2/\": dial tcp: lookup \
                     {host}: no such host"
                ),
                PullError::UnknownAuthority => format!(
                    "pinging container registry {host}: Get \"https://{host}/v2/\": tls: failed to \
                     verify certificate: x509: certificate signed by unknown authority"
                ),
            };
            format!("rpc error: code = Unknown desc = {cause}")
        }
    }
}

/// An image reference, normalized as runtimes do (`nginx:1` is `docker.io/library/nginx:1`).
struct Reference<'a> {
    host: &'a str,
    repo: String,
    tag: &'a str,
}

impl<'a> Reference<'a> {
    fn parse(image: &'a str) -> Self {
        let (host, rest) = match image.split_once('/') {
            Some((h, rest)) if h.contains('.') || h.contains(':') || h == "localhost" => (h, rest),
            _ => ("docker.io", image),
        };
        let (path, tag) = match rest.rsplit_once(':') {
            Some((p, t)) if !t.contains('/') => (p, t),
            _ => (rest, "latest"),
        };
        let repo = if host == "docker.io" && !path.contains('/') {
            format!("library/{path}")
        } else {
            path.to_string()
        };
        Self { host, repo, tag }
    }

    fn full(&self) -> String {
        format!("{}/{}:{}", self.host, self.repo, self.tag)
    }

    /// Where requests go: Docker Hub's registry is not at docker.io.
    fn endpoint(&self) -> &str {
        match self.host {
            "docker.io" => "registry-1.docker.io",
            h => h,
        }
    }
}

/// A stable made-up manifest digest for `image`.
fn digest(image: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    (0..4)
        .map(|round| {
            for b in image.bytes().chain([round]) {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
            format!("{h:016x}")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_normalized_like_the_runtime_does() {
        let msg = runtime_error(Runtime::Containerd, PullError::NotFound, "x:1.0");
        assert_eq!(
            msg,
            "rpc error: code = NotFound desc = failed to pull and unpack image \
             \"docker.io/library/x:1.0\": failed to resolve reference \"docker.io/library/x:1.0\": \
             docker.io/library/x:1.0: not found"
        );
        let crio = runtime_error(Runtime::CriO, PullError::NotFound, "quay.io/acme/x:1.0");
        assert!(crio.ends_with("reading manifest 1.0 in quay.io/acme/x: manifest unknown"));
        let host = runtime_error(
            Runtime::CriO,
            PullError::NoSuchHost,
            "registry.internal.example/a:1",
        );
        assert!(host.contains(
            "pinging container registry registry.internal.example: Get \
             \"https://registry.internal.example/v2/\": dial tcp: lookup registry.internal.example: \
             no such host"
        ));
        let limit = runtime_error(Runtime::Containerd, PullError::RateLimited, "varnish:7.6");
        assert!(
            limit.contains("https://registry-1.docker.io/v2/library/varnish/manifests/sha256:")
        );
        assert!(limit.contains("429 Too Many Requests - Server message: toomanyrequests:"));
    }
}
