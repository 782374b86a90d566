"""The session's link to the broker's transaction coordinator (AMQP 1.0 part 4): declare and
discharge, and what an outcome that never came back means (in doubt)."""
# Shares underscore members with the other modules of one provider (see jmspy/_amqp/__init__.py).

from __future__ import annotations

import itertools
import logging
from typing import TYPE_CHECKING, Any

from proton import (
    Data,
    Delivery,
    Link,
    Terminus,
    symbol,
    ulong,
)

from ..errors import (
    JMSException,
    TransactionInDoubtException,
    TransactionRolledBackException,
)
from .completion import Completion
from .links import _LinkBase
from .terms import (
    DECLARE,
    DECLARED_CODE,
    DISCHARGE,
    LOCAL_TRANSACTIONS,
    LinkSpec,
    _put_symbols,
    error_for_condition,
)

if TYPE_CHECKING:
    from .session import AmqpSession

log = logging.getLogger("jmspy.provider")


def _control_payload(descriptor: symbol, fields: list[Any]) -> bytes:
    """An amqp-value section holding a transaction control (declare / discharge)."""
    data = Data()
    data.put_described()
    data.enter()
    data.put_ulong(ulong(0x77))
    data.put_described()
    data.enter()
    data.put_symbol(descriptor)
    data.put_list()
    data.enter()
    for field_value in fields:
        data.put_object(field_value)
    data.exit()
    data.exit()
    data.exit()
    return bytes(data.encode())


class AmqpCoordinator(_LinkBase):
    """The session's link to the broker's transaction coordinator (AMQP 1.0 part 4)."""

    def __init__(self, session: AmqpSession) -> None:
        super().__init__(session, LinkSpec(name=f"jmspy:coordinator:{id(session)}", address=None))
        self._pending: dict[Any, tuple[str, Completion[Any]]] = {}
        self._tags = itertools.count(1)

    def _remote_terminus(self) -> Any:
        return self.link.remote_target

    def _on_remote_open(self) -> None:
        if self._attach is not None and not self._attach.done():
            if self.link.remote_target is None:
                return
            self.ever_attached = True
            self._attach.succeed(None)

    def _do_attach(self, completion: Completion[None]) -> None:
        self._attach = completion
        link = self.session._proton.sender(self.spec.name)
        self._register(link)
        link.target.type = Terminus.COORDINATOR
        _put_symbols(link.target.capabilities, (LOCAL_TRANSACTIONS,))
        _put_symbols(link.source.outcomes, ("amqp:accepted:list", "amqp:rejected:list"))
        link.snd_settle_mode = Link.SND_UNSETTLED
        link.rcv_settle_mode = Link.RCV_FIRST
        link.open()

    def _control(
        self, kind: str, payload: bytes, completion: Completion[Any], epoch: int | None = None
    ) -> None:
        if self.failure is not None:
            completion.fail(self.failure)
            return
        if epoch is not None and epoch != self.connection.epoch:
            # The transaction belonged to a transport that failover replaced: the broker
            # dropped it with that connection, and nothing is sent.
            completion.fail(
                TransactionRolledBackException(
                    "the connection to the broker was interrupted during the transaction; the "
                    "broker rolled it back"
                )
            )
            return
        tag = f"txn-{next(self._tags)}".encode()
        delivery = self.link.delivery(tag)
        self.link.stream(payload)
        self.link.advance()
        self._pending[delivery.tag] = (kind, completion)

    def declare(self) -> bytes:
        def work(completion: Completion[bytes]) -> None:
            self._control("declare", _control_payload(DECLARE, []), completion)

        txn_id: bytes = self.connection.run(work, "declaring a transaction")
        return txn_id

    def discharge(
        self,
        txn_id: bytes,
        fail: bool,
        epoch: int | None = None,
        timeout_ms: int | None = None,
    ) -> None:
        """Commit (``fail=False``) or roll back. Raises TransactionRolledBackException when the
        broker refused or certainly dropped the transaction, TransactionInDoubtException when
        the discharge was sent and its outcome never came back."""

        def work(completion: Completion[None]) -> None:
            self._control(
                "discharge", _control_payload(DISCHARGE, [txn_id, fail]), completion, epoch
            )

        what = "rolling back" if fail else "committing the transaction"
        failure = self.connection.failure
        if failure is not None:
            raise TransactionRolledBackException(
                f"{what}: the connection has failed ({failure.reason}); the broker rolled the "
                "transaction back",
                linked=failure,
            )
        try:
            self.connection.run(work, what, timeout_ms)
        except (TransactionRolledBackException, TransactionInDoubtException):
            raise
        except JMSException as exc:
            raise TransactionInDoubtException(
                f"{what}: no outcome came back from the broker ({exc.reason}); the transaction "
                "may or may not have been " + ("rolled back" if fail else "committed"),
                linked=exc,
            ) from exc

    def _on_flow(self) -> None:
        pass

    def _on_delivery(self, delivery: Delivery) -> None:
        state = delivery.remote_state
        if not state:
            return
        pending = self._pending.pop(delivery.tag, None)
        delivery.settle()
        if pending is None:
            return
        self._after_earlier_transfers()
        kind, completion = pending
        if state == DECLARED_CODE and kind == "declare":
            data = delivery.remote.data
            completion.succeed(bytes(data[0]) if data else b"")
        elif state == Delivery.ACCEPTED and kind == "discharge":
            completion.succeed(None)
        elif state == Delivery.REJECTED:
            default = TransactionRolledBackException if kind == "discharge" else JMSException
            completion.fail(
                error_for_condition(
                    delivery.remote.condition, default, f"transaction {kind} refused"
                )
            )
        else:
            completion.fail(JMSException(f"unexpected outcome {state} for transaction {kind}"))

    def _on_interrupted(self, error: JMSException) -> None:
        super()._on_interrupted(error)
        self._fail_pending(error)

    def _on_failed(self, error: JMSException) -> None:
        super()._on_failed(error)
        self._fail_pending(error)

    def _fail_pending(self, error: JMSException) -> None:
        """The transport is gone with controls in flight: a discharge's outcome is unknown; a
        declare is simply lost (the session declares again when it next needs one)."""
        for kind, completion in self._pending.values():
            if kind == "discharge":
                completion.fail(
                    TransactionInDoubtException(
                        "the connection to the broker was lost while the transaction was being "
                        f"discharged: its outcome is unknown ({error.reason})",
                        linked=error,
                    )
                )
            else:
                completion.fail(error)
        self._pending.clear()
