"""Pure renderers from a Report to an output format: text for terminals (``text``), the drift page (``html``)."""
