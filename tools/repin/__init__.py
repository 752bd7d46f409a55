"""scripts/repin: move the project to another operator commit and write the maintainer's worklist
(:mod:`tools.repin.main`)."""
