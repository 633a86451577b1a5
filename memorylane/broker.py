"""The local broker: kombu's filesystem transport, with messages that appear whole.

kombu's ``filesystem`` transport creates a message file and then writes into it, while a consumer
moves any ``*.msg`` file it lists out of the queue folder without waiting for the writer's lock. A
worker that lists the folder between those two steps takes an empty message, fails to decode it and
its consumer stops, losing the message (seen in CI: an extraction retried every second during a
database outage was never run again). Here a message is written under a name no consumer reads and
renamed into place, and renaming within one folder is atomic: a consumer sees all of it or nothing.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

PARTIAL_SUFFIX = ".partial"  # consumers only take names ending in "<queue>.msg"


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = final + PARTIAL_SUFFIX
        try:
            with open(partial, "wb") as handle:
                handle.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.remove(partial)
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel
