//! A 403 as a person reads it: the `can-i` check that finds the permission it lacked.

use opc_core::actions::Denied;
use opc_core::cluster::ClusterName;

#[test]
fn a_subresource_is_checked_as_one() {
    let denied = Denied {
        verb: "patch",
        resource: "deployments/scale",
        namespace: "shop".into(),
        message: "forbidden".into(),
        context: None,
    };
    let said = denied.to_string();
    assert!(
        said.contains("`kubectl auth can-i patch deployments --subresource=scale -n shop`"),
        "{said}"
    );
    // The cluster a process runs in has no context to name; a kubeconfig's has.
    for (cluster, check) in [
        (ClusterName::IN_CLUSTER, "-n shop`"),
        ("prod-eu", "-n shop --context prod-eu`"),
    ] {
        let denied = Denied {
            context: Some(ClusterName::new(cluster)),
            ..denied.clone()
        };
        let said = denied.to_string();
        assert!(said.contains(check), "{said}");
    }
}
