def pytest_configure(config):
    config.addinivalue_line("markers", "fuzz: property-based fuzz tests through the real CLI (a few minutes)")
