//! What a test asserts of text a tenant wrote, once shown.

/// No byte that a terminal acts on, and no character that reorders or hides text.
pub fn assert_inert(text: &str) {
    let hazard = text
        .chars()
        .find(|&c| c != '\n' && opc_core::inert::is_hazard(c));
    assert_eq!(hazard, None, "a raw hazard reached the terminal:\n{text:?}");
}
