"""Session modes (the JMS ``Session`` constants), in a module of their own: every API module
needs them, and importing them from ``connection`` made the API modules import each other."""

SESSION_TRANSACTED = 0
AUTO_ACKNOWLEDGE = 1
CLIENT_ACKNOWLEDGE = 2
DUPS_OK_ACKNOWLEDGE = 3
# Qpid JMS's extension mode (rule JMS-67): Message.acknowledge() settles that one message.
# Java code passes the number (Qpid JMS keeps the constant private), so the value is the same.
INDIVIDUAL_ACKNOWLEDGE = 101
# Qpid JMS's no-acknowledgement modes (rule JMS-68): the broker settles every message as it
# sends it (a presettled consumer link), nothing is acknowledged and nothing is redelivered.
# 100 is the number Artemis's own client gives its PRE_ACKNOWLEDGE; Qpid JMS takes both.
ARTEMIS_PRE_ACKNOWLEDGE = 100
NO_ACKNOWLEDGE = 257
ACKNOWLEDGE_MODES = {
    SESSION_TRANSACTED: "SESSION_TRANSACTED",
    AUTO_ACKNOWLEDGE: "AUTO_ACKNOWLEDGE",
    CLIENT_ACKNOWLEDGE: "CLIENT_ACKNOWLEDGE",
    DUPS_OK_ACKNOWLEDGE: "DUPS_OK_ACKNOWLEDGE",
    INDIVIDUAL_ACKNOWLEDGE: "INDIVIDUAL_ACKNOWLEDGE",
    ARTEMIS_PRE_ACKNOWLEDGE: "ARTEMIS_PRE_ACKNOWLEDGE",
    NO_ACKNOWLEDGE: "NO_ACKNOWLEDGE",
}
# Modes in which the application acknowledges with Message.acknowledge(): the session keeps
# what it handed out until then, and closing a consumer fails what is left.
ACKNOWLEDGED_BY_APPLICATION = frozenset({CLIENT_ACKNOWLEDGE, INDIVIDUAL_ACKNOWLEDGE})
# Modes whose consumers are presettled: a message counts as consumed once it is sent (JMS-68).
NOT_ACKNOWLEDGED = frozenset({ARTEMIS_PRE_ACKNOWLEDGE, NO_ACKNOWLEDGE})


def is_session_mode(value: object) -> bool:
    """Whether ``value`` is one of the session modes: an int, not a bool (True == 1 would pass
    as AUTO_ACKNOWLEDGE) nor a float (1.0 likewise), and not an unhashable value (a list would
    raise TypeError out of the look-up). Rules JMS-3 and JMS-16."""
    return type(value) is int and value in ACKNOWLEDGE_MODES


# The refusal every mode check shares (rules JMS-3, JMS-16).
VALID_MODES_TEXT = (
    "use AUTO_ACKNOWLEDGE (1), CLIENT_ACKNOWLEDGE (2), DUPS_OK_ACKNOWLEDGE (3), "
    "SESSION_TRANSACTED (0), INDIVIDUAL_ACKNOWLEDGE (101), ARTEMIS_PRE_ACKNOWLEDGE (100) or "
    "NO_ACKNOWLEDGE (257)"
)
