"""Session modes (the JMS ``Session`` constants), in a module of their own: every API module
needs them, and importing them from ``connection`` made the API modules import each other."""

SESSION_TRANSACTED = 0
AUTO_ACKNOWLEDGE = 1
CLIENT_ACKNOWLEDGE = 2
DUPS_OK_ACKNOWLEDGE = 3
ACKNOWLEDGE_MODES = {
    SESSION_TRANSACTED: "SESSION_TRANSACTED",
    AUTO_ACKNOWLEDGE: "AUTO_ACKNOWLEDGE",
    CLIENT_ACKNOWLEDGE: "CLIENT_ACKNOWLEDGE",
    DUPS_OK_ACKNOWLEDGE: "DUPS_OK_ACKNOWLEDGE",
}
