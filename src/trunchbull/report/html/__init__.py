"""The HTML report: the bundled front end (web/), the embedded payload, the page."""
