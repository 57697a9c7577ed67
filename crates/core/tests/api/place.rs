use opc_core::place::{PauseScope, Place, registry_host};
use opc_core::rules::RuleKind;

#[test]
fn the_registry_is_read_from_the_image_the_kubelet_quotes() {
    fn host(message: &str) -> Option<String> {
        let place = Place::at(RuleKind::ImagePull, "shop", None, Some(message));
        place.shared.map(|scope| match scope {
            PauseScope::Registry(host) => host,
            other => panic!("not a registry: {other:?}"),
        })
    }
    assert_eq!(
        host("Back-off pulling image \"web:1\"").as_deref(),
        Some("docker.io")
    );
    assert_eq!(
        host("Back-off pulling image \"registry-a.invalid/app:1\"").as_deref(),
        Some("registry-a.invalid")
    );
    assert_eq!(
        host(
            "rpc error: code = NotFound desc = failed to pull and unpack image \"localhost:5000/x:1\": not found"
        )
        .as_deref(),
        Some("localhost:5000")
    );
    assert_eq!(host("library/nginx/x"), None);
    assert_eq!(registry_host("library/nginx:1"), "docker.io");
}
