"""Reading recorded sessions: finding logs, dumping them, and (in the dashboard) scrubbing them."""
