"""The Connect page's widgets (layout only; behaviour lives in the page)."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeWidget,
    QVBoxLayout,
    QWidget,
)

from app.ui.widgets.wraplabel import WrapLabel


class WrappingDelegate(QStyledItemDelegate):
    """Cells as tall as their text wrapped at their column's width.

    A tree view asks its delegate for a row's height without the column's width, so a
    wrapped text would keep one line and be cut; this delegate measures at that width.
    """

    def __init__(self, view: QTreeWidget) -> None:
        super().__init__(view)
        self._view = view
        view.header().sectionResized.connect(self._on_section_resized)

    def sizeHint(  # noqa: N802 - Qt's name
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        wrapped = QStyleOptionViewItem(option)
        # A valid rectangle (height too): the style wraps only within one.
        wrapped.rect = QRect(0, 0, self._view.columnWidth(index.column()), 1)
        return super().sizeHint(wrapped, index)

    def _on_section_resized(self, *_args: object) -> None:
        self._view.scheduleDelayedItemsLayout()  # the rows' heights follow the new width


#: The rows the check's results keep room for: its eight steps and one wrapped detail.
STEP_ROWS = 9


def grid_row(grid: QGridLayout, row: int, *cells: tuple[str, QWidget | QLayout, int]) -> None:
    """Put labelled fields in a row of a four-column grid (label, field, label, field).

    Each cell is (label text, field, columns the field spans: 1, or 3 for the whole row);
    the label's mnemonic goes to the field, as a form layout's would.
    """
    column = 0
    for text, field, span in cells:
        label = QLabel(text)
        grid.addWidget(label, row, column)
        if isinstance(field, QWidget):
            label.setBuddy(field)
            grid.addWidget(field, row, column + 1, 1, span)
        else:
            item = field.itemAt(0)
            first = item.widget() if item is not None else None
            if first is not None:
                label.setBuddy(first)
            grid.addLayout(field, row, column + 1, 1, span)
        column += 1 + span
    grid.setColumnStretch(1, 1)
    grid.setColumnStretch(3, 1)


class PortEdit(QLineEdit):
    """The SSH port as typed: empty means the default; anything else must be a port number.

    A line edit, not a spin box: a spin box drops the letters of "2x2y5" as they are typed
    (leaving 225) and keeps its last value when the text is cleared. Here the text is what
    counts, and :meth:`problem` says what is wrong with it.
    """

    def __init__(self) -> None:
        super().__init__()
        self.setPlaceholderText("default (22, or what ~/.ssh/config says)")
        self.setMaxLength(12)

    def problem(self) -> str | None:
        """What is wrong with the typed port, or None when it is empty or a port number."""
        text = self.text().strip()
        if not text:
            return None
        if not text.isdecimal() or not text.isascii():
            return f'The port "{text}" is not a number.'
        if not 1 <= int(text) <= 65535:
            return f"The port {int(text)} is out of range."
        return None

    def value(self) -> int:
        """The port number, 0 for the default (empty or not a valid port)."""
        text = self.text().strip()
        if self.problem() is not None or not text:
            return 0
        return int(text)

    def setValue(self, port: int) -> None:  # noqa: N802 - the spin box's name, kept for callers
        """Show ``port``; 0 empties the box (the default)."""
        self.setText(str(port) if port else "")


class ConnectView(QWidget):
    """The Connect page's widgets (layout only; behaviour lives in the page)."""

    def __init__(self) -> None:
        super().__init__()
        layout = QVBoxLayout(self)

        # A job started from this computer and not seen to end: offered at start-up.
        banner_row = QHBoxLayout()
        self.banner = QLabel()
        self.banner.setObjectName("unfinished_job_banner")
        self.banner.setWordWrap(True)
        self.reconnect = QPushButton("Reconnect and see the &job")
        self.reconnect.setObjectName("reconnect_job")
        banner_row.addWidget(self.banner, 1)
        banner_row.addWidget(self.reconnect)
        layout.addLayout(banner_row)
        self.banner.setVisible(False)
        self.reconnect.setVisible(False)

        # Rolling back is a task of its own: someone who only wants the old settings back
        # goes from here straight to the snapshot list.
        task_row = QHBoxLayout()
        task_row.addWidget(QLabel("What do you want to do?"))
        self.tune = QRadioButton("T&une this server")
        self.restore = QRadioButton("&Restore an earlier snapshot")
        self.tasks = QButtonGroup(self)
        for i, button in enumerate((self.tune, self.restore)):
            self.tasks.addButton(button, i)
            task_row.addWidget(button)
        self.tune.setChecked(True)
        for button in (self.tune, self.restore):
            button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        task_row.addStretch(1)
        self.open_facts = QPushButton("Open a saved &facts file or plan…")
        self.open_facts.setToolTip(
            "Review facts or a plan saved to a file from the command line (innotune inspect "
            "or innotune plan; a plan with its facts), without connecting"
        )
        task_row.addWidget(self.open_facts)
        layout.addLayout(task_row)

        self.practice = QRadioButton("&Practice server on this computer (safe to experiment)")
        self.local = QRadioButton("&This computer")
        self.ssh = QRadioButton("Another computer over &SSH")
        self.kinds = QButtonGroup(self)
        # The three kinds in one row, the SSH and access fields two to a row where they are
        # short: the room saved goes to the check's results, every step of which is shown.
        kind_row = QHBoxLayout()
        for i, button in enumerate((self.practice, self.local, self.ssh)):
            self.kinds.addButton(button, i)
            kind_row.addWidget(button)
        kind_row.addStretch(1)
        layout.addLayout(kind_row)
        self.practice.setChecked(True)
        self.practice_note = WrapLabel()  # what the chosen kind is (not only the practice's)
        self.practice_note.setIndent(24)
        layout.addWidget(self.practice_note)

        self.ssh_box = QGroupBox("SSH")
        form = QGridLayout(self.ssh_box)
        self.host = QLineEdit()
        self.host.setPlaceholderText(
            "db1.example.com, 192.0.2.7, [2001:db8::7] or an ~/.ssh/config alias"
        )
        self.user = QLineEdit()
        self.user.setPlaceholderText("as in ~/.ssh/config, or your login name")
        self.port = PortEdit()
        key_row = QHBoxLayout()
        self.identity = QLineEdit()
        self.identity.setPlaceholderText("the agent and ~/.ssh keys are tried when empty")
        self.browse = QPushButton("Bro&wse…")
        key_row.addWidget(self.identity)
        key_row.addWidget(self.browse)
        self.login_password = QLineEdit()
        self.login_password.setEchoMode(QLineEdit.EchoMode.Password)
        self.login_password.setPlaceholderText("only if the host takes passwords")
        grid_row(form, 0, ("&Host:", self.host, 3))
        grid_row(form, 1, ("User:", self.user, 1), ("P&ort:", self.port, 1))
        grid_row(form, 2, ("&Key file:", key_row, 3))
        grid_row(form, 3, ("Login password:", self.login_password, 1))
        layout.addWidget(self.ssh_box)

        self.access_box = QGroupBox("Access to the server")
        access = QGridLayout(self.access_box)
        self.sudo_password = QLineEdit()
        self.sudo_password.setEchoMode(QLineEdit.EchoMode.Password)
        self.sudo_password.setPlaceholderText("only if sudo asks for one")
        self.mysql_user = QLineEdit()
        self.mysql_user.setPlaceholderText("empty: log in as root through the socket, with sudo")
        self.mysql_password = QLineEdit()
        self.mysql_password.setEchoMode(QLineEdit.EchoMode.Password)
        self.instance = QLineEdit()
        self.instance.setPlaceholderText(
            "socket, port, pid or container — only when several servers run"
        )
        grid_row(access, 0, ("&Database user:", self.mysql_user, 3))
        grid_row(
            access,
            1,
            ("Database password:", self.mysql_password, 1),
            ("sudo password:", self.sudo_password, 1),
        )
        grid_row(access, 2, ("Server &instance:", self.instance, 3))
        layout.addWidget(self.access_box)

        profile_row = QHBoxLayout()
        self.profiles = QComboBox()
        self.profiles.setMinimumContentsLength(18)
        self.save_profile = QPushButton("Sa&ve profile…")
        self.delete_profile = QPushButton("Re&move profile")
        profile_label = QLabel("Profile:")
        profile_label.setBuddy(self.profiles)
        self.profiles.setAccessibleName("saved profile")
        profile_row.addWidget(profile_label)
        profile_row.addWidget(self.profiles, 1)
        profile_row.addWidget(self.save_profile)
        profile_row.addWidget(self.delete_profile)
        layout.addLayout(profile_row)
        self.remember = QCheckBox("Remember passwords in the s&ystem keyring")
        layout.addWidget(self.remember)

        self.check = QPushButton("&Check connection")
        self.check.setDefault(True)
        self.cancel_check = QPushButton("Cance&l check")
        self.cancel_check.setToolTip("Stop the check and close what it opened on the server")
        self.cancel_check.setEnabled(False)
        check_row = QHBoxLayout()
        check_row.addWidget(self.check)
        check_row.addWidget(self.cancel_check)
        check_row.addStretch(1)
        layout.addLayout(check_row)
        self.steps = QTreeWidget()
        self.steps.setHeaderLabels(["Step", "Result", "Details"])
        self.steps.setRootIsDecorated(False)
        self.steps.setColumnWidth(0, 190)
        self.steps.setColumnWidth(1, 90)
        # A long detail wraps onto more lines of its row rather than ending in "…".
        self.steps.setWordWrap(True)
        self.steps.setUniformRowHeights(False)
        self.steps.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.steps.setItemDelegate(WrappingDelegate(self.steps))
        # Room for every step of a check (eight) and a detail on a second line, whole.
        line = self.steps.fontMetrics().lineSpacing()
        self.steps.setMinimumHeight(STEP_ROWS * (line + 4) + line + 12)
        layout.addWidget(self.steps, 1)
        chooser_row = QHBoxLayout()
        self.chooser_label = QLabel("This host runs several servers. Which one?")
        self.chooser = QComboBox()
        self.chooser.setAccessibleName("server instance chooser")
        # A container's label is long: the list shows it whole, the box does not widen the page.
        self.chooser.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.chooser.setMinimumContentsLength(30)
        self.chooser_label.setBuddy(self.chooser)
        chooser_row.addWidget(self.chooser_label)
        chooser_row.addWidget(self.chooser, 1)
        layout.addLayout(chooser_row)
        for w in (self.chooser_label, self.chooser):
            w.setVisible(False)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setObjectName("connect_message")
        # An error's "Details…" link opens the log: reachable by mouse and by keyboard.
        self.message.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        layout.addWidget(self.message)

        for widget, name in (
            (self.host, "SSH host"),
            (self.user, "SSH user"),
            (self.port, "SSH port"),
            (self.identity, "SSH key file"),
            (self.login_password, "SSH login password"),
            (self.sudo_password, "sudo password"),
            (self.mysql_user, "database user"),
            (self.mysql_password, "database password"),
            (self.instance, "server instance"),
            (self.steps, "connection check steps"),
        ):
            widget.setAccessibleName(name)

    def kind(self) -> str:
        """The chosen kind of target: practice, local or ssh."""
        return ("practice", "local", "ssh")[max(self.kinds.checkedId(), 0)]

    def target_fields(self) -> tuple[QLineEdit, ...]:
        """The fields that say which server is checked (a change there makes a new target)."""
        return (self.host, self.user, self.port, self.identity, self.mysql_user, self.instance)
